package acptest_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acphost/acphost/acptest"
)

func TestInitializeDefaults(t *testing.T) {
	c := start(t, acptest.Script{})
	var r struct {
		ProtocolVersion   int             `json:"protocolVersion"`
		AgentCapabilities json.RawMessage `json:"agentCapabilities"`
		AuthMethods       []any           `json:"authMethods"`
		AgentInfo         struct {
			Name string `json:"name"`
		} `json:"agentInfo"`
	}
	c.result(c.call("initialize", `{"protocolVersion":1}`), &r)
	if r.ProtocolVersion != 1 || r.AgentInfo.Name != "acptest-fakeagent" || r.AuthMethods == nil {
		t.Errorf("initialize result = %+v", r)
	}
	if string(r.AgentCapabilities) != string(acptest.DefaultAgentCapabilities) {
		t.Errorf("agentCapabilities = %s", r.AgentCapabilities)
	}
}

func TestInitializeScripted(t *testing.T) {
	c := start(t, acptest.Script{
		ProtocolVersion: 2,
		Initialize: acptest.InitializeScript{
			AgentCapabilities: raw(`{"loadSession":false}`),
			AuthMethods:       raw(`[{"id":"key","name":"API key"}]`),
			AgentInfo:         raw(`{"name":"other","version":"9"}`),
			Meta:              raw(`{"vendor.example/x":1}`),
			Steps:             []acptest.Step{{Stderr: "starting"}},
		},
	})
	id := c.call("initialize", `{"protocolVersion":1}`)
	_, resp := c.until(id)
	want := `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":2,"agentCapabilities":{"loadSession":false},"authMethods":[{"id":"key","name":"API key"}],"agentInfo":{"name":"other","version":"9"},"_meta":{"vendor.example/x":1}}}` + "\n"
	if string(resp.line) != want {
		t.Errorf("got  %s\nwant %s", resp.line, want)
	}

	failing := start(t, acptest.Script{Initialize: acptest.InitializeScript{Error: &acptest.Error{Code: -32603, Message: "boom"}}})
	_, resp = failing.until(failing.call("initialize", `{"protocolVersion":1}`))
	if resp.Error == nil || resp.Error.Code != -32603 {
		t.Errorf("initialize error = %s", resp.line)
	}
}

func TestNewSessionUpdatesBeforeAnswer(t *testing.T) {
	c := start(t, acptest.Script{NewSession: acptest.NewSessionScript{
		SessionIDs: []string{"first"},
		Steps: []acptest.Step{
			{Update: raw(`{"sessionUpdate":"available_commands_update","availableCommands":[{"name":"compact","description":"Compact the context"}]}`)},
		},
		Modes:         raw(`{"currentModeId":"ask","availableModes":[{"id":"ask","name":"Ask"}]}`),
		ConfigOptions: raw(`[{"id":"model","name":"Model","type":"select","currentValue":"a","options":[{"value":"a","name":"A"},{"value":"b","name":"B"}]}]`),
		Models:        raw(`{"currentModelId":"a","availableModels":[{"modelId":"a","name":"A"}]}`),
	}})
	c.initialize()
	for _, wantID := range []string{"first", "sess_2"} {
		var r struct {
			SessionID string          `json:"sessionId"`
			Modes     json.RawMessage `json:"modes"`
			Models    json.RawMessage `json:"models"`
		}
		before := c.result(c.call("session/new", `{"cwd":"/tmp","mcpServers":[]}`), &r)
		if r.SessionID != wantID || r.Modes == nil || r.Models == nil {
			t.Errorf("session/new = %+v, want id %s", r, wantID)
		}
		if len(before) != 1 || sessionOf(before[0]) != wantID || !strings.Contains(string(before[0].Params), "available_commands_update") {
			t.Errorf("before the answer: %v", before)
		}
	}
}

func TestAuthRequired(t *testing.T) {
	c := start(t, acptest.Script{
		Initialize: acptest.InitializeScript{AuthMethods: raw(`[{"id":"openai-api-key","name":"API key"}]`)},
		NewSession: acptest.NewSessionScript{
			RequireAuth: "openai-api-key",
			AuthError:   &acptest.Error{Code: -32000, Message: "Authentication required", Data: raw(`{"methods":["openai-api-key"]}`)},
		},
	})
	c.initialize()
	_, resp := c.until(c.call("session/new", `{"cwd":"/tmp","mcpServers":[]}`))
	if resp.Error == nil || resp.Error.Code != -32000 || string(resp.Error.Data) != `{"methods":["openai-api-key"]}` {
		t.Fatalf("session/new before auth = %s", resp.line)
	}
	c.result(c.call("authenticate", `{"methodId":"other"}`), nil)
	if _, resp := c.until(c.call("session/new", `{"cwd":"/tmp","mcpServers":[]}`)); resp.Error == nil {
		t.Fatalf("session/new after the wrong auth method succeeded")
	}
	c.result(c.call("authenticate", `{"methodId":"openai-api-key"}`), nil)
	if id := c.newSession(); id != "sess_1" {
		t.Errorf("session id after auth = %q", id)
	}
	// Signed out, the agent asks for a sign-in again.
	c.result(c.call("logout", `{}`), nil)
	if _, resp := c.until(c.call("session/new", `{"cwd":"/tmp","mcpServers":[]}`)); resp.Error == nil || resp.Error.Code != -32000 {
		t.Fatalf("session/new after logout = %s, want the auth error", resp.line)
	}
}

// session/resume resumes without a replay and reports the scripted
// modes and config options, as a load does.
func TestResumeSession(t *testing.T) {
	c := start(t, acptest.Script{LoadSession: acptest.LoadSessionScript{
		Replay:        []acptest.Step{{Text: "hello"}},
		ConfigOptions: raw(`[]`),
		Modes:         raw(`{"currentModeId":"code","availableModes":[{"id":"code","name":"Code"}]}`),
	}})
	c.initialize()
	before, resp := c.until(c.call("session/resume", `{"sessionId":"old","cwd":"/tmp"}`))
	if len(before) != 0 {
		t.Errorf("session/resume sent %d updates before its answer, want no replay", len(before))
	}
	if resp.Error != nil || !strings.Contains(string(resp.Result), `"currentModeId":"code"`) || !strings.Contains(string(resp.Result), `"configOptions":[]`) {
		t.Fatalf("session/resume = %s", resp.line)
	}
}

func TestLoadSession(t *testing.T) {
	c := start(t, acptest.Script{LoadSession: acptest.LoadSessionScript{
		Sessions: []string{"old"},
		Replay: []acptest.Step{
			{Update: raw(`{"sessionUpdate":"user_message_chunk","content":{"type":"text","text":"hi"}}`)},
			{Text: "hello"},
		},
		ConfigOptions: raw(`[]`),
	}})
	c.initialize()
	before := c.result(c.call("session/load", `{"sessionId":"old","cwd":"/tmp","mcpServers":[]}`), nil)
	if len(before) != 2 || sessionOf(before[0]) != "old" || sessionOf(before[1]) != "old" {
		t.Errorf("replay = %v", before)
	}
	_, resp := c.until(c.call("session/load", `{"sessionId":"nope","cwd":"/tmp","mcpServers":[]}`))
	if resp.Error == nil || resp.Error.Code != -32002 {
		t.Errorf("load of an unknown id = %s", resp.line)
	}
	// A session created on this connection can be loaded.
	id := c.newSession()
	c.result(c.call("session/load", `{"sessionId":"`+id+`","cwd":"/tmp","mcpServers":[]}`), nil)

	// A null result, like older agents send (not schema-valid, so unchecked).
	null := start(t, acptest.Script{LoadSession: acptest.LoadSessionScript{Sessions: []string{"old"}, NullResult: true}})
	null.call("session/load", `{"sessionId":"old","cwd":"/tmp","mcpServers":[]}`)
	if got := string(null.rawLine()); got != `{"jsonrpc":"2.0","id":1,"result":null}`+"\n" {
		t.Errorf("null result = %s", got)
	}
}

func TestMethods(t *testing.T) {
	c := start(t, acptest.Script{
		NewSession: acptest.NewSessionScript{
			ConfigOptions: raw(`[{"id":"model","name":"Model","type":"select","currentValue":"a","options":[{"value":"a","name":"A"},{"value":"b","name":"B"}]},{"id":"fast","name":"Fast","type":"boolean","currentValue":false}]`),
		},
		Methods: map[string]acptest.Reply{
			"session/compact":    {Steps: []acptest.Step{{Notify: &acptest.Notification{Method: "_crewcoder/compaction_update", Params: raw(`{"sessionId":"sess_1","status":"in_progress"}`)}}}, Result: raw(`{"compacted":true}`)},
			"session/set_mode":   {Error: &acptest.Error{Code: -32602, Message: "no such mode"}},
			"_vendor.example/do": {},
		},
	})
	c.initialize()
	session := c.newSession()

	before, resp := c.until(c.call("session/compact", `{"sessionId":"sess_1"}`))
	if string(resp.Result) != `{"compacted":true}` || len(before) != 1 || before[0].Method != "_crewcoder/compaction_update" {
		t.Errorf("session/compact: %v then %s", before, resp.line)
	}
	if _, resp := c.until(c.call("_vendor.example/do", `{}`)); string(resp.Result) != `{}` {
		t.Errorf("empty canned reply = %s", resp.line)
	}
	if _, resp := c.until(c.call("session/set_mode", `{"sessionId":"sess_1","modeId":"x"}`)); resp.Error == nil || resp.Error.Code != -32602 {
		t.Errorf("canned error = %s", resp.line)
	}

	var opts struct {
		ConfigOptions []struct {
			ID           string `json:"id"`
			CurrentValue any    `json:"currentValue"`
		} `json:"configOptions"`
	}
	c.result(c.call("session/set_config_option", `{"sessionId":"sess_1","configId":"model","value":"b"}`), &opts)
	c.result(c.call("session/set_config_option", `{"sessionId":"sess_1","configId":"fast","type":"boolean","value":true}`), &opts)
	if len(opts.ConfigOptions) != 2 || opts.ConfigOptions[0].CurrentValue != "b" || opts.ConfigOptions[1].CurrentValue != true {
		t.Errorf("config options after two changes = %+v", opts)
	}
	if _, resp := c.until(c.call("session/set_config_option", `{"sessionId":"sess_1","configId":"nope","value":"b"}`)); resp.Error == nil || resp.Error.Code != -32602 {
		t.Errorf("unknown config option = %s", resp.line)
	}

	for _, method := range []string{"session/set_model", "session/resume", "session/close", "logout"} {
		params := `{"sessionId":"` + session + `","modelId":"a","cwd":"/tmp"}`
		if method == "logout" {
			params = `{}`
		}
		if _, resp := c.until(c.call(method, params)); string(resp.Result) != `{}` {
			t.Errorf("%s = %s", method, resp.line)
		}
	}
	var list struct {
		Sessions []struct {
			SessionID string `json:"sessionId"`
			Cwd       string `json:"cwd"`
		} `json:"sessions"`
	}
	c.result(c.call("session/list", `{}`), &list)
	if len(list.Sessions) != 1 || list.Sessions[0].SessionID != session || list.Sessions[0].Cwd != "/tmp" {
		t.Errorf("session/list = %+v", list)
	}
	_, resp = c.until(c.call("session/fork", `{"sessionId":"sess_1","cwd":"/tmp"}`))
	if resp.Error == nil || resp.Error.Code != -32601 {
		t.Errorf("unknown method = %s", resp.line)
	}
}

func TestPromptTurns(t *testing.T) {
	c := start(t, acptest.Script{Prompts: []acptest.Turn{
		{Steps: []acptest.Step{{Text: "default"}}},
		{Match: "refuse", StopReason: "refusal", Usage: raw(`{"totalTokens":3,"inputTokens":1,"outputTokens":2}`), Meta: raw(`{"x":1}`)},
		{Match: "plan", Steps: []acptest.Step{
			{Update: raw(`{"sessionUpdate":"plan","entries":[{"content":"a","priority":"high","status":"pending"}]}`)},
			{Update: raw(`{"sessionUpdate":"tool_call","toolCallId":"t1","title":"Read","kind":"read","status":"in_progress"}`)},
		}, After: []acptest.Step{
			{Update: raw(`{"sessionUpdate":"tool_call_update","toolCallId":"t1","status":"completed"}`)},
			{Update: raw(`{"sessionUpdate":"usage_update","used":10,"size":100}`)},
		}},
		{Match: "fail", Error: &acptest.Error{Code: -32603, Message: "model overloaded"}},
	}})
	c.initialize()
	s := c.newSession()

	if reason, texts := c.stopReason(c.prompt(s, "hello")); reason != "end_turn" || !slices.Equal(texts, []string{"default"}) {
		t.Errorf("default turn: %s %q", reason, texts)
	}
	_, resp := c.until(c.prompt(s, "please refuse this"))
	if !strings.Contains(string(resp.Result), `"stopReason":"refusal","usage":{"totalTokens":3`) || !strings.Contains(string(resp.Result), `"_meta":{"x":1}`) {
		t.Errorf("refusal turn = %s", resp.line)
	}
	before := c.result(c.prompt(s, "make a plan"), nil)
	if len(before) != 2 {
		t.Errorf("plan turn updates before the answer: %d", len(before))
	}
	for _, want := range []string{"tool_call_update", "usage_update"} {
		if m := c.next(); !strings.Contains(string(m.Params), want) || sessionOf(m) != s {
			t.Errorf("late update = %s, want %s", m.line, want)
		}
	}
	_, resp = c.until(c.prompt(s, "fail now"))
	if resp.Error == nil || resp.Error.Message != "model overloaded" {
		t.Errorf("failing turn = %s", resp.line)
	}

	// No default turn: an empty end_turn.
	bare := start(t, acptest.Script{Prompts: []acptest.Turn{{Match: "x", StopReason: "max_tokens"}}})
	bare.initialize()
	if reason, _ := bare.stopReason(bare.prompt(bare.newSession(), "y")); reason != "end_turn" {
		t.Errorf("unmatched prompt = %s", reason)
	}
}

// request waits for the agent's next request of method and returns it.
func (c *client) request(method string) msg {
	c.t.Helper()
	for {
		m := c.next()
		if m.Method == method && m.ID != nil {
			return m
		}
		if m.Method == "" {
			c.t.Fatalf("response %s while waiting for %s", m.line, method)
		}
		c.skipped = append(c.skipped, m)
	}
}

func TestPermission(t *testing.T) {
	c := start(t, acptest.Script{Prompts: []acptest.Turn{{Steps: []acptest.Step{
		{Update: raw(`{"sessionUpdate":"tool_call","toolCallId":"w1","title":"Write","kind":"edit","status":"pending"}`)},
		{Permission: &acptest.Permission{
			ToolCall: raw(`{"toolCallId":"w1","title":"Write a.txt"}`),
			Options: []acptest.PermissionOption{
				{OptionID: "allow", Name: "Allow", Kind: "allow_once"},
				{OptionID: "always", Name: "Always", Kind: "allow_always"},
				{OptionID: "no", Name: "No", Kind: "reject_once"},
			},
			OnSelect:    map[string][]acptest.Step{"allow": {{Text: "writing"}}},
			OnReject:    []acptest.Step{{Text: "not writing"}},
			OnCancelled: []acptest.Step{{Update: raw(`{"sessionUpdate":"tool_call_update","toolCallId":"w1","status":"failed"}`)}, {Text: "gave up"}},
		}},
		{Text: "done"},
	}}}})
	c.initialize()
	s := c.newSession()

	cases := []struct {
		outcome string
		want    []string
	}{
		{`{"outcome":{"outcome":"selected","optionId":"allow"}}`, []string{"permission: selected allow", "writing", "done"}},
		{`{"outcome":{"outcome":"selected","optionId":"always"}}`, []string{"permission: selected always", "done"}},
		{`{"outcome":{"outcome":"selected","optionId":"no"}}`, []string{"permission: selected no", "not writing", "done"}},
		{`{"outcome":{"outcome":"cancelled"}}`, []string{"permission: cancelled", "gave up", "done"}},
	}
	for _, tc := range cases {
		id := c.prompt(s, "go")
		req := c.request("session/request_permission")
		var p struct {
			SessionID string `json:"sessionId"`
			Options   []any  `json:"options"`
		}
		json.Unmarshal(req.Params, &p)
		if p.SessionID != s || len(p.Options) != 3 {
			t.Errorf("permission request = %s", req.line)
		}
		c.reply(req.ID, tc.outcome)
		if reason, texts := c.stopReason(id); reason != "end_turn" || !slices.Equal(texts, tc.want) {
			t.Errorf("after %s: %s %q, want %q", tc.outcome, reason, texts, tc.want)
		}
	}

	// session/cancel while the dialog is open: the client answers
	// cancelled, the branch runs, the turn ends cancelled.
	id := c.prompt(s, "go")
	req := c.request("session/request_permission")
	c.notify("session/cancel", `{"sessionId":"`+s+`"}`)
	c.reply(req.ID, `{"outcome":{"outcome":"cancelled"}}`)
	if reason, texts := c.stopReason(id); reason != "cancelled" || !slices.Equal(texts, []string{"permission: cancelled", "gave up"}) {
		t.Errorf("cancelled dialog: %s %q", reason, texts)
	}

	// An error answer is reported too.
	id = c.prompt(s, "go")
	req = c.request("session/request_permission")
	c.replyError(req.ID, -32603, "no UI")
	if _, texts := c.stopReason(id); texts[0] != "permission: error -32603 no UI" {
		t.Errorf("error answer: %q", texts)
	}
}

func TestPermissionDefaults(t *testing.T) {
	c := start(t, acptest.Script{Prompts: []acptest.Turn{{Steps: []acptest.Step{{Permission: &acptest.Permission{}}}}}})
	c.initialize()
	s := c.newSession()
	id := c.prompt(s, "x")
	req := c.request("session/request_permission")
	want := `{"sessionId":"sess_1","toolCall":{"toolCallId":"call_1"},"options":[{"optionId":"allow","name":"Allow","kind":"allow_once"},{"optionId":"reject","name":"Reject","kind":"reject_once"}]}`
	if string(req.Params) != want {
		t.Errorf("params = %s", req.Params)
	}
	c.reply(req.ID, `{"outcome":{"outcome":"selected","optionId":"reject"}}`)
	c.stopReason(id)
}

func TestFileSystem(t *testing.T) {
	c := start(t, acptest.Script{Prompts: []acptest.Turn{{Steps: []acptest.Step{
		{ReadFile: &acptest.ReadFile{Path: "/work/a.txt", Line: 2, Limit: 3}},
		{ReadFile: &acptest.ReadFile{Path: "/work/missing.txt"}},
		{WriteFile: &acptest.WriteFile{Path: "/work/b.txt", Content: "new\n"}},
		{WriteFile: &acptest.WriteFile{Path: "/etc/passwd", Content: "x"}},
	}}}})
	c.initialize()
	s := c.newSession()
	id := c.prompt(s, "go")

	req := c.request("fs/read_text_file")
	if string(req.Params) != `{"sessionId":"sess_1","path":"/work/a.txt","line":2,"limit":3}` {
		t.Errorf("read params = %s", req.Params)
	}
	c.reply(req.ID, `{"content":"two\nthree\n"}`)
	c.replyError(c.request("fs/read_text_file").ID, -32002, "Resource not found")
	req = c.request("fs/write_text_file")
	if string(req.Params) != `{"sessionId":"sess_1","path":"/work/b.txt","content":"new\n"}` {
		t.Errorf("write params = %s", req.Params)
	}
	c.reply(req.ID, `{}`)
	c.replyError(c.request("fs/write_text_file").ID, -32603, "outside the session roots")

	_, got := c.stopReason(id)
	want := []string{
		"read /work/a.txt: two\nthree\n",
		"read /work/missing.txt: error -32002 Resource not found",
		"write /work/b.txt: ok",
		"write /etc/passwd: error -32603 outside the session roots",
	}
	if !slices.Equal(got, want) {
		t.Errorf("reports %q, want %q", got, want)
	}
}

func TestTerminal(t *testing.T) {
	c := start(t, acptest.Script{Prompts: []acptest.Turn{{Steps: []acptest.Step{
		{Update: raw(`{"sessionUpdate":"tool_call","toolCallId":"t1","title":"echo","kind":"execute"}`)},
		{Terminal: &acptest.Terminal{Command: "echo", Args: []string{"hi"}, Env: raw(`[{"name":"A","value":"1"}]`), Cwd: "/work", OutputByteLimit: 100, ToolCallID: "t1", Kill: true}},
		{Terminal: &acptest.Terminal{Command: "false"}},
	}}}})
	c.initialize()
	s := c.newSession()
	id := c.prompt(s, "go")

	req := c.request("terminal/create")
	if string(req.Params) != `{"sessionId":"sess_1","command":"echo","args":["hi"],"env":[{"name":"A","value":"1"}],"cwd":"/work","outputByteLimit":100}` {
		t.Errorf("create params = %s", req.Params)
	}
	c.reply(req.ID, `{"terminalId":"term_1"}`)
	if m := c.next(); !strings.Contains(string(m.Params), `"content":[{"terminalId":"term_1","type":"terminal"}]`) {
		t.Errorf("embedding update = %s", m.line)
	}
	for _, step := range []struct{ method, result string }{
		{"terminal/kill", `{}`},
		{"terminal/wait_for_exit", `{"exitCode":0,"signal":null}`},
		{"terminal/output", `{"output":"hi\n","truncated":false,"exitStatus":{"exitCode":0}}`},
		{"terminal/release", `{}`},
	} {
		req := c.request(step.method)
		if string(req.Params) != `{"sessionId":"sess_1","terminalId":"term_1"}` {
			t.Errorf("%s params = %s", step.method, req.Params)
		}
		c.reply(req.ID, step.result)
	}
	c.replyError(c.request("terminal/create").ID, -32601, "Method not found")
	_, got := c.stopReason(id)
	want := []string{`terminal: exit 0 signal none truncated false output "hi\n"`, "terminal: terminal/create error -32601 Method not found"}
	if !slices.Equal(got, want) {
		t.Errorf("reports %q, want %q", got, want)
	}
}

func TestRequestStep(t *testing.T) {
	c := start(t, acptest.Script{
		RequestIDs: acptest.RequestIDs{Strings: true, Start: 7},
		Prompts: []acptest.Turn{{Steps: []acptest.Step{
			{Request: &acptest.Request{Method: "elicitation/create", Params: raw(`{"sessionId":"sess_1","mode":"form","message":"Name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}`)}},
			{Request: &acptest.Request{Method: "_vendor.example/slow", CancelAfter: acptest.Duration(10 * time.Millisecond)}},
		}}},
	})
	c.initialize()
	s := c.newSession()
	id := c.prompt(s, "go")
	req := c.request("elicitation/create")
	if string(req.ID) != `"00000007-0000-4000-8000-000000000007"` {
		t.Errorf("string request id = %s", req.ID)
	}
	c.reply(req.ID, `{"action":"accept","content":{"name":"Ada"}}`)
	slow := c.request("_vendor.example/slow")
	cancel := c.next()
	if cancel.Method != "$/cancel_request" || string(cancel.Params) != `{"requestId":`+string(slow.ID)+`}` {
		t.Errorf("cancel = %s", cancel.line)
	}
	c.replyError(slow.ID, -32800, "Request cancelled")
	_, got := c.stopReason(id)
	want := []string{`request elicitation/create: result {"action":"accept","content":{"name":"Ada"}}`, "request _vendor.example/slow: error -32800 Request cancelled"}
	if !slices.Equal(got, want) {
		t.Errorf("reports %q, want %q", got, want)
	}
}

func TestNumericRequestIDs(t *testing.T) {
	c := start(t, acptest.Script{Prompts: []acptest.Turn{{Steps: []acptest.Step{
		{Permission: &acptest.Permission{}}, {Permission: &acptest.Permission{}},
	}}}})
	c.initialize()
	id := c.prompt(c.newSession(), "go")
	for _, want := range []string{"0", "1"} {
		req := c.request("session/request_permission")
		if string(req.ID) != want {
			t.Errorf("request id = %s, want %s", req.ID, want)
		}
		c.reply(req.ID, `{"outcome":{"outcome":"cancelled"}}`)
	}
	c.stopReason(id)
}

func TestCancel(t *testing.T) {
	c := start(t, acptest.Script{Prompts: []acptest.Turn{
		{Match: "wait", Steps: []acptest.Step{{Text: "working"}, {WaitCancel: true}, {Text: "never"}}, After: []acptest.Step{{Text: "late"}}},
		{Match: "sleep", Steps: []acptest.Step{{Sleep: acptest.Duration(time.Hour)}, {Text: "never"}}},
		{Match: "stubborn", IgnoreCancel: true, Steps: []acptest.Step{{WaitCancel: true}, {Sleep: acptest.Duration(20 * time.Millisecond)}, {Text: "finished anyway"}}},
		{Match: "hang", Steps: []acptest.Step{{Text: "hanging"}, {Hang: true}}},
	}})
	c.initialize()
	s := c.newSession()
	cancel := func() { c.notify("session/cancel", `{"sessionId":"`+s+`"}`) }

	id := c.prompt(s, "wait")
	if text, _ := chunkText(c.next()); text != "working" {
		t.Fatalf("first chunk = %q", text)
	}
	cancel()
	if reason, texts := c.stopReason(id); reason != "cancelled" || len(texts) != 0 {
		t.Errorf("waitCancel turn: %s %q", reason, texts)
	}
	if text, _ := chunkText(c.next()); text != "late" {
		t.Errorf("after a cancelled turn: %q", text)
	}

	id = c.prompt(s, "sleep")
	if _, err := c.agent.WaitFor(context.Background(), acptest.Method("session/prompt")); err != nil {
		t.Fatal(err)
	}
	cancel()
	if reason, _ := c.stopReason(id); reason != "cancelled" {
		t.Errorf("sleeping turn: %s", reason)
	}

	id = c.prompt(s, "stubborn")
	cancel()
	if reason, texts := c.stopReason(id); reason != "end_turn" || !slices.Equal(texts, []string{"finished anyway"}) {
		t.Errorf("turn ignoring cancel: %s %q", reason, texts)
	}

	c.prompt(s, "hang")
	c.next()
	cancel()
	c.expectSilence(50 * time.Millisecond)
}

func TestCancelRequest(t *testing.T) {
	c := start(t, acptest.Script{
		Methods: map[string]acptest.Reply{"session/compact": {Steps: []acptest.Step{{WaitCancel: true}}}},
		Prompts: []acptest.Turn{{Steps: []acptest.Step{{WaitCancel: true}}}},
	})
	c.initialize()
	s := c.newSession()
	id := c.call("session/compact", `{"sessionId":"`+s+`"}`)
	c.notify("$/cancel_request", `{"requestId":`+string(id)+`}`)
	if _, resp := c.until(id); resp.Error == nil || resp.Error.Code != -32800 {
		t.Errorf("cancelled request = %s", resp.line)
	}
	id = c.prompt(s, "x")
	c.notify("$/cancel_request", `{"requestId":`+string(id)+`}`)
	if reason, _ := c.stopReason(id); reason != "cancelled" {
		t.Errorf("prompt cancelled by $/cancel_request: %s", reason)
	}
	// Cancelling something already answered or unknown does nothing.
	c.notify("$/cancel_request", `{"requestId":999}`)
	c.notify("session/cancel", `{"sessionId":"nobody"}`)
	c.result(c.call("session/set_mode", `{"sessionId":"`+s+`","modeId":"x"}`), nil)
}

func TestConcurrentSessions(t *testing.T) {
	c := start(t, acptest.Script{Prompts: []acptest.Turn{
		{Match: "slow", Steps: []acptest.Step{{Text: "slow start"}, {WaitCancel: true}}},
		{Steps: []acptest.Step{{Sleep: acptest.Duration(5 * time.Millisecond)}, {Text: "quick"}}},
	}})
	c.initialize()
	a, b := c.newSession(), c.newSession()
	slow := c.prompt(a, "slow")
	quick := c.prompt(b, "quick")
	// The quick turn finishes while the slow one still runs.
	_, resp := c.until(quick)
	if !strings.Contains(string(resp.Result), "end_turn") {
		t.Errorf("quick turn = %s", resp.line)
	}
	c.notify("session/cancel", `{"sessionId":"`+a+`"}`)
	if reason, _ := c.stopReason(slow); reason != "cancelled" {
		t.Errorf("slow turn = %s", reason)
	}
}

func TestFaults(t *testing.T) {
	stderr := &syncBuffer{}
	agent := acptest.NewAgent(acptest.Script{Prompts: []acptest.Turn{
		{Match: "junk", Steps: []acptest.Step{
			{Junk: "INFO starting model"},
			{Raw: `{"jsonrpc":"2.0","method":"session/upd` + "\n"},
			{Raw: "\r\n"},
			{Stderr: "a log line"},
			{Respond: &acptest.Stray{}},
			{Respond: &acptest.Stray{ID: raw(`12345`), Error: &acptest.Error{Code: -32603, Message: "stray"}}},
			{SessionID: "other", Text: "for another session"},
		}},
		{Match: "huge", Steps: []acptest.Step{{Huge: 3 << 20}}},
		{Match: "exit", Steps: []acptest.Step{{Text: "bye"}, {Exit: intPtr(3)}}},
	}})
	agent.Stderr = stderr
	c := startAgent(t, agent)
	c.initialize()
	s := c.newSession()

	id := c.prompt(s, "junk")
	for _, want := range []string{"INFO starting model\n", `{"jsonrpc":"2.0","method":"session/upd` + "\n", "\r\n", `{"jsonrpc":"2.0","id":null,"result":{}}` + "\n", `{"jsonrpc":"2.0","id":12345,"error":{"code":-32603,"message":"stray"}}` + "\n"} {
		if got := string(c.rawLine()); got != want {
			t.Errorf("fault line %q, want %q", got, want)
		}
	}
	if m := c.next(); sessionOf(m) != "other" {
		t.Errorf("session override: %s", m.line)
	}
	c.stopReason(id)
	if !strings.Contains(stderr.String(), "a log line\n") {
		t.Errorf("stderr = %q", stderr.String())
	}

	id = c.prompt(s, "huge")
	line := c.rawLine()
	var huge struct {
		Params struct {
			SessionID string `json:"sessionId"`
			Update    struct {
				Content struct {
					Text string `json:"text"`
				} `json:"content"`
			} `json:"update"`
		} `json:"params"`
	}
	if err := json.Unmarshal(line, &huge); err != nil || len(huge.Params.Update.Content.Text) != 3<<20 || huge.Params.SessionID != s {
		t.Errorf("huge line of %d bytes: %v", len(line), err)
	}
	c.stopReason(id)

	c.prompt(s, "exit")
	if text, _ := chunkText(c.next()); text != "bye" {
		t.Errorf("before exit: %q", text)
	}
	select {
	case line, ok := <-c.lines:
		if ok {
			t.Errorf("line after exit: %s", line)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("connection still open after exit")
	}
}

func TestServeReturns(t *testing.T) {
	exit := 4
	script := acptest.Script{OnStart: []acptest.Step{{Stderr: "hello"}, {Exit: &exit}}}
	err := acptest.NewAgent(script).Serve(context.Background(), strings.NewReader(""), &syncBuffer{})
	var exitErr *acptest.ExitError
	if !errorsAs(err, &exitErr) || exitErr.Code != 4 {
		t.Errorf("Serve after exit = %v", err)
	}

	out := &syncBuffer{}
	in := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}` + "\n" + "not json\n"
	if err := acptest.NewAgent(acptest.Script{}).Serve(context.Background(), strings.NewReader(in), out); err != nil {
		t.Errorf("Serve at EOF = %v", err)
	}
	if !strings.Contains(out.String(), `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`) {
		t.Errorf("no parse error answer in %s", out.String())
	}

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- acptest.NewAgent(acptest.Script{StayAfterEOF: true}).Serve(ctx, strings.NewReader(""), &syncBuffer{})
	}()
	select {
	case err := <-done:
		t.Fatalf("StayAfterEOF agent returned at EOF: %v", err)
	case <-time.After(20 * time.Millisecond):
	}
	cancel()
	if err := <-done; err != context.Canceled {
		t.Errorf("Serve after cancel = %v", err)
	}
}

func TestReceived(t *testing.T) {
	c := start(t, acptest.Script{})
	c.initialize()
	s := c.newSession()
	c.notify("session/cancel", `{"sessionId":"`+s+`"}`)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	m, err := c.agent.WaitFor(ctx, acptest.Method("session/cancel"))
	if err != nil || string(m.Params) != `{"sessionId":"`+s+`"}` || m.ID != nil {
		t.Errorf("WaitFor = %+v, %v", m, err)
	}
	var methods []string
	for _, m := range c.agent.Received() {
		methods = append(methods, m.Method)
	}
	if !slices.Equal(methods, []string{"initialize", "session/new", "session/cancel"}) {
		t.Errorf("received %q", methods)
	}
	short, cancelShort := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancelShort()
	if _, err := c.agent.WaitFor(short, acptest.Method("never")); err == nil {
		t.Errorf("WaitFor found a message never sent")
	}
}

func TestOnStart(t *testing.T) {
	c := start(t, acptest.Script{OnStart: []acptest.Step{
		{Junk: "Loading config..."},
		{SessionID: "early", Update: raw(`{"sessionUpdate":"session_info_update","title":"x"}`)},
	}})
	if got := string(c.rawLine()); got != "Loading config...\n" {
		t.Errorf("first line %q", got)
	}
	if m := c.next(); sessionOf(m) != "early" {
		t.Errorf("early update %s", m.line)
	}
	c.initialize()
}

func TestScriptJSON(t *testing.T) {
	exit := 2
	script := acptest.Script{
		ProtocolVersion: 1,
		Initialize:      acptest.InitializeScript{AuthMethods: raw(`[{"id":"a","name":"A"}]`)},
		NewSession:      acptest.NewSessionScript{SessionIDs: []string{"s"}, RequireAuth: "a", Steps: []acptest.Step{{Text: "hi"}}},
		LoadSession:     acptest.LoadSessionScript{Sessions: []string{"old"}, Replay: []acptest.Step{{Sleep: acptest.Duration(time.Millisecond)}}},
		Methods:         map[string]acptest.Reply{"session/compact": {Result: raw(`{"ok":true}`)}},
		Prompts: []acptest.Turn{{
			Match: "x", StopReason: "max_tokens", IgnoreCancel: true,
			Steps: []acptest.Step{
				{Permission: &acptest.Permission{OnSelect: map[string][]acptest.Step{"allow": {{Text: "ok"}}}, CancelAfter: acptest.Duration(time.Second)}},
				{ReadFile: &acptest.ReadFile{Path: "/a", Line: 1}}, {WriteFile: &acptest.WriteFile{Path: "/b", Content: "c"}},
				{Terminal: &acptest.Terminal{Command: "ls"}}, {Huge: 10}, {Exit: &exit}, {Hang: true}, {WaitCancel: true},
				{Respond: &acptest.Stray{ID: raw(`"x"`)}}, {Notify: &acptest.Notification{Method: "_x", Params: raw(`{}`)}},
			},
			After: []acptest.Step{{Junk: "j"}, {Raw: "r"}, {Stderr: "e"}},
		}},
		RequestIDs:    acptest.RequestIDs{Start: 5, Strings: true},
		StayAfterEOF:  true,
		IgnoreSIGTERM: true,
	}
	b, err := json.Marshal(script)
	if err != nil {
		t.Fatal(err)
	}
	var back acptest.Script
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(script, back) {
		t.Errorf("round trip changed the script:\n%s", b)
	}
	if !strings.Contains(string(b), `"sleep":"1ms"`) {
		t.Errorf("durations are not strings: %s", b)
	}
	var d acptest.Duration
	if err := json.Unmarshal([]byte(`250`), &d); err != nil || time.Duration(d) != 250*time.Millisecond {
		t.Errorf("duration from a number = %v, %v", time.Duration(d), err)
	}
}

func intPtr(n int) *int { return &n }

// syncBuffer is a strings.Builder safe for concurrent writers.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func errorsAs(err error, target any) bool { return errors.As(err, target) }

func TestQuietReportsSilencesOutcomeChunks(t *testing.T) {
	c := start(t, acptest.Script{QuietReports: true, Prompts: []acptest.Turn{{Steps: []acptest.Step{
		{Permission: &acptest.Permission{}}, {Text: "done"},
	}}}})
	c.initialize()
	sid := c.newSession()
	id := c.prompt(sid, "x")
	req := c.request("session/request_permission")
	c.reply(req.ID, `{"outcome":{"outcome":"selected","optionId":"allow"}}`)
	if reason, texts := c.stopReason(id); reason != "end_turn" || !slices.Equal(texts, []string{"done"}) {
		t.Fatalf("texts %q (%s)", texts, reason)
	}
}

// TestSetModeScript: set_mode refuses the listed modes and confirms the
// others with a current_mode_update before its answer.
func TestSetModeScript(t *testing.T) {
	c := start(t, acptest.Script{SetMode: acptest.SetModeScript{Refuse: []string{"yolo"}, Report: true}})
	c.initialize()
	c.newSession()
	before, resp := c.until(c.call("session/set_mode", `{"sessionId":"sess_1","modeId":"default"}`))
	if resp.Error != nil || len(before) != 1 || !strings.Contains(string(before[0].Params), `"currentModeId":"default"`) {
		t.Errorf("accepted mode: %v then %s", before, resp.line)
	}
	before, resp = c.until(c.call("session/set_mode", `{"sessionId":"sess_1","modeId":"yolo"}`))
	if resp.Error == nil || resp.Error.Code != -32602 || len(before) != 0 {
		t.Errorf("refused mode: %v then %s", before, resp.line)
	}
}
