package acpclient

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestDecodeUpdateVariants(t *testing.T) {
	tests := []struct {
		raw   string
		check func(t *testing.T, u SessionUpdate)
	}{
		{`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"},"messageId":"m1"}`, func(t *testing.T, u SessionUpdate) {
			c := u.(*AgentMessageChunk)
			if c.Content.Text != "hi" || *c.MessageID != "m1" {
				t.Errorf("%+v", c)
			}
		}},
		{`{"sessionUpdate":"tool_call","toolCallId":"t1","title":"Read a.go","kind":"read","status":"pending","name":"Read","locations":[{"path":"/a.go","line":3}],"rawInput":{"path":"/a.go"},"content":[{"type":"diff","path":"/a.go","oldText":null,"newText":"x"},{"type":"content","content":{"type":"text","text":"ok"}},{"type":"terminal","terminalId":"term1"},{"type":"hologram","x":1}]}`, func(t *testing.T, u SessionUpdate) {
			c := u.(*ToolCallStart)
			if c.ToolCallID != "t1" || c.Name != "Read" || *c.Locations[0].Line != 3 || string(c.RawInput) != `{"path":"/a.go"}` {
				t.Errorf("%+v", c)
			}
			if len(c.Content) != 4 || c.Content[0].OldText != nil || c.Content[1].Content.Text != "ok" || c.Content[2].TerminalID != "term1" {
				t.Errorf("content %+v", c.Content)
			}
			if string(c.Content[3].Raw) != `{"type":"hologram","x":1}` {
				t.Errorf("unknown tool content lost: %+v", c.Content[3])
			}
		}},
		{`{"sessionUpdate":"tool_call_update","toolCallId":"t1","status":"completed","rawOutput":{"todos":[]}}`, func(t *testing.T, u SessionUpdate) {
			c := u.(*ToolCallProgress)
			if *c.Status != ToolStatusCompleted || c.Title != nil || c.Content != nil || string(c.RawOutput) != `{"todos":[]}` {
				t.Errorf("%+v", c)
			}
		}},
		{`{"sessionUpdate":"plan","entries":[{"content":"a","priority":"high","status":"pending"}]}`, func(t *testing.T, u SessionUpdate) {
			if p := u.(*PlanUpdate); p.Entries[0].Priority != "high" {
				t.Errorf("%+v", p)
			}
		}},
		{`{"sessionUpdate":"current_mode_update","modeId":"code"}`, func(t *testing.T, u SessionUpdate) {
			if m := u.(*CurrentModeUpdate); m.CurrentModeID != "code" {
				t.Errorf("legacy modeId not accepted: %+v", m)
			}
		}},
		{`{"sessionUpdate":"session_info_update","title":null,"_meta":{"k":1}}`, func(t *testing.T, u SessionUpdate) {
			s := u.(*SessionInfoUpdate)
			if title, changed := s.Title(); !changed || title != "" {
				t.Errorf("null title should clear: %q %v", title, changed)
			}
			if _, changed := s.UpdatedAt(); changed {
				t.Error("absent updatedAt reported as changed")
			}
			if string(s.Meta) != `{"k":1}` {
				t.Errorf("_meta lost: %s", s.Meta)
			}
		}},
		{`{"sessionUpdate":"usage_update","used":1000,"size":200000,"cost":{"amount":0.25,"currency":"USD"}}`, func(t *testing.T, u SessionUpdate) {
			if us := u.(*UsageUpdate); us.Used != 1000 || us.Size != 200000 || us.Cost.Currency != "USD" {
				t.Errorf("%+v", us)
			}
		}},
		{`{"sessionUpdate":"compaction_update","compactionId":"c1","status":"completed","summary":[{"type":"text","text":"sum"}]}`, func(t *testing.T, u SessionUpdate) {
			if c := u.(*CompactionUpdate); c.Status != "completed" || c.Summary[0].Text != "sum" {
				t.Errorf("%+v", c)
			}
		}},
		{`{"sessionUpdate":"config_option_update","configOptions":[{"id":"b","name":"B","type":"boolean","currentValue":true}]}`, func(t *testing.T, u SessionUpdate) {
			if c := u.(*ConfigOptionUpdate); !c.ConfigOptions[0].BoolValue {
				t.Errorf("%+v", c)
			}
		}},
		{`{"sessionUpdate":"config_option_update","configOptions":[{"id":"b","name":"B","type":"boolean","currentValue":"yes"},{"id":"s","name":"S","type":"select","currentValue":7,"options":[]}]}`, func(t *testing.T, u SessionUpdate) {
			c := u.(*ConfigOptionUpdate)
			if c.ConfigOptions[0].BoolValue || !strings.Contains(string(c.ConfigOptions[0].Raw), `"yes"`) || !strings.Contains(string(c.ConfigOptions[1].Raw), `7`) {
				t.Errorf("values of the wrong type must be kept in Raw: %+v", c.ConfigOptions)
			}
		}},
		{`{"sessionUpdate":"plan_update","plan":{"type":"items","planId":"p1","entries":[{"content":"a","priority":"high","status":"pending"}]}}`, func(t *testing.T, u SessionUpdate) {
			if p := u.(*PlanContentUpdate); p.Plan.PlanID != "p1" || p.Plan.Entries[0].Content != "a" || p.Plan.Raw != nil {
				t.Errorf("%+v", p)
			}
		}},
		{`{"sessionUpdate":"plan_update","plan":{"type":"diagram","planId":"p2","svg":"<svg/>"}}`, func(t *testing.T, u SessionUpdate) {
			if p := u.(*PlanContentUpdate); p.Plan.Type != "diagram" || !strings.Contains(string(p.Plan.Raw), "svg") {
				t.Errorf("unknown plan type not kept: %+v", p)
			}
		}},
		{`{"sessionUpdate":"plan_removed","planId":"p1"}`, func(t *testing.T, u SessionUpdate) {
			if p := u.(*PlanRemoved); p.PlanID != "p1" {
				t.Errorf("%+v", p)
			}
		}},
		{`{"sessionUpdate":"brand_new_kind","x":1}`, func(t *testing.T, u SessionUpdate) {
			un := u.(*UnknownUpdate)
			if un.Kind() != "brand_new_kind" || string(un.Raw) != `{"sessionUpdate":"brand_new_kind","x":1}` {
				t.Errorf("%+v", un)
			}
		}},
		{`{"sessionUpdate":"agent_message_chunk","content":{"type":"3d_model","mesh":"..."}}`, func(t *testing.T, u SessionUpdate) {
			c := u.(*AgentMessageChunk)
			if c.Content.Type != "3d_model" || !strings.Contains(string(c.Content.Raw), "mesh") {
				t.Errorf("unknown content type not kept: %+v", c.Content)
			}
		}},
		// Malformed optional fields fall back to defaults; the update survives.
		{`{"sessionUpdate":"tool_call","toolCallId":"t2","title":"x","status":42,"locations":"nope"}`, func(t *testing.T, u SessionUpdate) {
			c := u.(*ToolCallStart)
			if c.ToolCallID != "t2" || c.Status != "" || c.Locations != nil {
				t.Errorf("%+v", c)
			}
		}},
		{`[1,2]`, func(t *testing.T, u SessionUpdate) {
			if _, ok := u.(*UnknownUpdate); !ok {
				t.Errorf("non-object decoded as %T", u)
			}
		}},
	}
	for _, tt := range tests {
		u := decodeUpdate(json.RawMessage(tt.raw))
		t.Run(u.Kind(), func(t *testing.T) { tt.check(t, u) })
	}
}

// TestUpdateRoundTrip: what we decode re-encodes to the same JSON value.
func TestUpdateRoundTrip(t *testing.T) {
	for _, raw := range []string{
		`{"sessionUpdate":"agent_thought_chunk","content":{"type":"text","text":"hmm"}}`,
		`{"sessionUpdate":"user_message_chunk","content":{"type":"image","data":"aGk=","mimeType":"image/png"}}`,
		`{"sessionUpdate":"tool_call","toolCallId":"t","title":"T","kind":"edit","content":[{"type":"diff","path":"/p","newText":"n"}]}`,
		`{"sessionUpdate":"tool_call_update","toolCallId":"t","status":"failed"}`,
		`{"sessionUpdate":"available_commands_update","availableCommands":[{"name":"c","description":"d","input":{"hint":"h"}}]}`,
		`{"sessionUpdate":"usage_update","used":1,"size":2}`,
		`{"sessionUpdate":"mystery","a":[1,{"b":null}]}`,
		`{"sessionUpdate":"plan_update","plan":{"type":"items","planId":"p","entries":[]}}`,
		`{"sessionUpdate":"plan_update","plan":{"type":"markdown","planId":"p","content":"# P"}}`,
		`{"sessionUpdate":"plan_update","plan":{"type":"file","planId":"p","uri":"file:///P.md","_meta":{"k":1}}}`,
		`{"sessionUpdate":"plan_update","plan":{"type":"diagram","planId":"p","svg":"<svg/>"}}`,
		`{"sessionUpdate":"plan_removed","planId":"p"}`,
		`{"sessionUpdate":"config_option_update","configOptions":[{"id":"b","name":"B","type":"boolean","currentValue":"yes"}]}`,
	} {
		u := decodeUpdate(json.RawMessage(raw))
		out, err := json.Marshal(u)
		if err != nil {
			t.Fatal(err)
		}
		var a, b any
		json.Unmarshal([]byte(raw), &a)
		json.Unmarshal(out, &b)
		if !reflect.DeepEqual(a, b) {
			t.Errorf("round trip of %s gave %s", raw, out)
		}
	}
}

// TestFastPathMatchesGeneralDecoder: the single-pass chunk decoder and the
// general one agree, and the fast path declines what it must not take.
func TestFastPathMatchesGeneralDecoder(t *testing.T) {
	lines := []string{
		chunkLineJSON("s", "plain"),
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_thought_chunk","content":{"type":"text","text":"t","annotations":{"priority":1}},"messageId":"m","_meta":{"x":1}},"_meta":{"y":2}}}`,
		`{"params":{"update":{"content":{"text":"reordered keys","type":"text"},"sessionUpdate":"user_message_chunk"},"sessionId":"s"},"method":"session/update","jsonrpc":"2.0"}`,
	}
	for _, l := range lines {
		fast := decodeChunkLine([]byte(l))
		if fast == nil {
			t.Fatalf("fast path declined %s", l)
		}
		var env envelope
		json.Unmarshal([]byte(l), &env)
		var slow SessionNotification
		if err := slow.UnmarshalJSON(env.Params); err != nil {
			t.Fatal(err)
		}
		fj, _ := json.Marshal(fast)
		sj, _ := json.Marshal(&slow)
		if string(fj) != string(sj) {
			t.Errorf("fast %s != general %s", fj, sj)
		}
	}
	for _, l := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x"}}}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"note":"session/update","x":{"sessionUpdate":"agent_message_chunk"}}}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"blob"}}}}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","sessionUpdate":"plan","content":{"type":"text","text":"x"}}}}`,
	} {
		if n := decodeChunkLine([]byte(l)); n != nil {
			t.Errorf("fast path took %s", l)
		}
	}
}

func TestContentBlockMarshalHasRequiredFields(t *testing.T) {
	tests := map[string]ContentBlock{
		`{"type":"text","text":""}`: TextBlock(""),
		`{"type":"resource","resource":{"uri":"file:///a","mimeType":"text/plain","text":"x"}}`: TextResourceBlock("file:///a", "text/plain", "x"),
		`{"type":"resource_link","uri":"file:///b","name":"b"}`:                                 ResourceLinkBlock("file:///b", "b"),
	}
	for want, b := range tests {
		got, _ := json.Marshal(b)
		if string(got) != want {
			t.Errorf("marshal = %s, want %s", got, want)
		}
	}
	s, _ := json.Marshal(MCPServer{Name: "fs", Command: "/bin/mcp"})
	if string(s) != `{"name":"fs","command":"/bin/mcp","args":[],"env":[]}` {
		t.Errorf("stdio MCP server = %s", s)
	}
	on := true
	r, _ := json.Marshal(SetConfigOptionRequest{SessionID: "s", ConfigID: "c", Bool: &on})
	if string(r) != `{"sessionId":"s","configId":"c","type":"boolean","value":true}` {
		t.Errorf("boolean set = %s", r)
	}
}
