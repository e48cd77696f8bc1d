package bridge

import (
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/bridge/terminal"
	"github.com/acphost/acphost/checkpoint"
)

// filledEvents is one event per Kind with every field its kind uses filled
// in, for the round-trip and schema tests. They carry the common keys of a
// session event; exited and the agent-wide ext have none of the session's.
func filledEvents() map[Kind]Event {
	at := time.Date(2026, 3, 1, 10, 0, 0, 123456789, time.UTC)
	common := func(kind Kind) Event {
		return Event{Pos: 42, Bridge: "agent-1", Key: "x4dq3xw2ohnx5m7ke2pjflqtyu", Session: "sess_1", Seq: 5, Turn: 2, Kind: kind, Time: at}
	}
	with := func(kind Kind, fill func(*Event)) Event {
		ev := common(kind)
		fill(&ev)
		return ev
	}
	old := "package a\n"
	line := 7
	size := int64(12)
	tool := &ToolCall{ID: "call_1", Title: "Edit a.go", Kind: "edit", Status: "in_progress", Name: "Edit", Parent: "task_1",
		Content: []acpclient.ToolCallContent{
			{Type: acpclient.ToolContentContent, Content: &acpclient.ContentBlock{Type: acpclient.ContentText, Text: "done"}},
			{Type: acpclient.ToolContentDiff, Path: "/w/a.go", OldText: &old, NewText: "package b\n"},
			{Type: acpclient.ToolContentTerminal, TerminalID: "term_1"},
			{Type: acpclient.ToolContentContent, Content: &acpclient.ContentBlock{Type: acpclient.ContentResourceLink, URI: "file:///w/a.go", Name: "a.go", Size: &size}},
		},
		Locations: []acpclient.ToolCallLocation{{Path: "/w/a.go", Line: &line}},
		RawInput:  json.RawMessage(`{"file_path":"/w/a.go"}`), RawOutput: json.RawMessage(`{"ok":true}`),
		Meta: json.RawMessage(`{"claudeCode":{"toolName":"Edit"}}`)}
	modes := &acpclient.ModeState{CurrentModeID: "code", AvailableModes: []acpclient.Mode{{ID: "code", Name: "Code"}, {ID: "ask", Name: "Ask", Description: "read only"}}}
	models := &acpclient.ModelState{CurrentModelID: "m1", AvailableModels: []acpclient.ModelInfo{{ModelID: "m1", Name: "Model One"}}}
	options := []acpclient.ConfigOption{
		{ID: "model", Name: "Model", Category: "model", Type: acpclient.ConfigSelect, Value: "m1", Options: []acpclient.SelectOption{{Value: "m1", Name: "Model One"}}},
		{ID: "fast", Name: "Fast", Type: acpclient.ConfigBoolean, BoolValue: true},
	}
	return map[Kind]Event{
		KindText:     with(KindText, func(e *Event) { e.Text, e.MessageID = "Hello", "m1" }),
		KindThinking: with(KindThinking, func(e *Event) { e.Text, e.MessageID = "The user wants", "m0" }),
		KindUserText: with(KindUserText, func(e *Event) { e.Text, e.Replay, e.Turn = "Fix the bug", true, 0 }),
		KindThinking + "+content": with(KindThinking, func(e *Event) {
			e.MessageID, e.ContentDropped = "m0", 3<<20
			e.Content = &acpclient.ContentBlock{Type: acpclient.ContentImage, MimeType: "image/png", URI: "file:///w/shot.png"}
		}),
		KindToolStart: with(KindToolStart, func(e *Event) {
			e.Tool = &ToolCall{ID: "call_1", Title: "Edit a.go", Kind: "edit", Status: "pending"}
		}),
		KindToolUpdate: with(KindToolUpdate, func(e *Event) { e.Tool = tool }),
		KindToolEnd: with(KindToolEnd, func(e *Event) {
			e.Late, e.Turn = true, 0
			e.Tool = &ToolCall{ID: "call_1", Title: "Edit a.go", Kind: "edit", Status: "completed"}
		}),
		KindPermission: with(KindPermission, func(e *Event) {
			e.Tool = tool
			e.Permission = &PermissionRequest{ID: "perm-1", Tool: tool, Options: []acpclient.PermissionOption{
				{OptionID: "allow", Name: "Allow", Kind: acpclient.PermissionAllowOnce},
				{OptionID: "reject", Name: "Reject", Kind: acpclient.PermissionRejectOnce, Meta: json.RawMessage(`{"x":1}`)}}}
		}),
		KindPlan: with(KindPlan, func(e *Event) {
			e.Plan = []acpclient.PlanEntry{{Content: "Read", Priority: "high", Status: "completed"}, {Content: "Fix", Priority: "medium", Status: "pending"}}
			e.Plans = []acpclient.PlanContent{{Type: "items", PlanID: "p1", Entries: e.Plan}, {Type: "markdown", PlanID: "p2", Content: "# Later"}}
		}),
		KindUsage: with(KindUsage, func(e *Event) {
			e.Usage = &Usage{Known: true, Used: 50000, Size: 200000, Percent: 25, Cost: &acpclient.Cost{Amount: 0.12, Currency: "USD"},
				Turn: &acpclient.PromptUsage{TotalTokens: 300, InputTokens: 200, OutputTokens: 100, ThoughtTokens: 10, CachedReadTokens: 5, CachedWriteTokens: 1}}
		}),
		KindCompaction: with(KindCompaction, func(e *Event) {
			e.Compaction = &Compaction{ID: "c1", Status: CompactionCompleted, Automatic: true, Summary: "We fixed a.go", Message: "compacted", Progress: 100, Phase: "done"}
		}),
		KindAgentMode: with(KindAgentMode, func(e *Event) { e.AgentMode = "architect" }),
		KindModel:     with(KindModel, func(e *Event) { e.Models = models }),
		KindTerminal: with(KindTerminal, func(e *Event) {
			code := 0
			e.Terminal = &terminal.Output{ID: "term-1", ToolCallID: "call_3", Source: "client", Data: "ok\n", Truncated: true, Reset: true,
				Exit: &acpclient.TerminalExitStatus{ExitCode: &code}}
		}),
		KindConfig: with(KindConfig, func(e *Event) { e.ConfigOptions = options }),
		KindCommands: with(KindCommands, func(e *Event) {
			e.Commands = []acpclient.AvailableCommand{{Name: "review", Description: "Review the diff", Input: &acpclient.CommandInput{Hint: "branch"}}}
		}),
		KindSessionInfo: with(KindSessionInfo, func(e *Event) {
			e.SessionInfo = &SessionInfo{Title: "Fix the bug", TitleChanged: true, UpdatedAtChanged: true}
		}),
		KindSession: with(KindSession, func(e *Event) {
			e.Turn = 0
			e.SessionReady = &SessionReady{Resumed: false, ResumeError: "session not found", AgentModes: modes, Models: models, ConfigOptions: options,
				Replaced: "sess_0", Reason: ReplacedAfterRestart, HistoryJournaled: true, ReplaySkipped: 12}
		}),
		KindSessionClosed: with(KindSessionClosed, func(e *Event) { e.Turn = 0 }),
		KindTurnStart:     with(KindTurnStart, func(e *Event) { e.Text = "Fix the bug" }),
		KindTurnEnd: with(KindTurnEnd, func(e *Event) {
			e.StopReason = "cancelled"
			e.Err = &EventError{Message: "bridge: session/prompt: overloaded (code -32603)", Code: acpclient.CodeInternalError}
		}),
		KindError: with(KindError, func(e *Event) { e.Err = &EventError{Message: "agent stderr: out of memory"} }),
		KindExited: {Pos: 43, Bridge: "agent-1", Seq: 9, Kind: KindExited, Time: at,
			Err: &EventError{Message: "agent exited: exit status 3; stderr: boom"}},
		KindExt: {Pos: 44, Bridge: "agent-1", Seq: 10, Kind: KindExt, Time: at, Method: "_vendor/progress",
			Raw: json.RawMessage(`{"sessionId":"sess_1","step":3}`)},
		KindElicitation: with(KindElicitation, func(e *Event) {
			e.Elicitation = &ElicitationRequest{ID: "ask-2", Message: "Which branch?", Mode: "form",
				Schema: json.RawMessage(`{"type":"object","properties":{"branch":{"type":"string"}}}`), ElicitationID: "el-1", URL: "https://example.com/x", ToolCallID: "call_1"}
		}),
		KindElicitationComplete: with(KindElicitationComplete, func(e *Event) {
			e.Elicitation = &ElicitationRequest{ID: "ask-4", Message: "Sign in", Mode: "url", URL: "https://tracker.example/login", ElicitationID: "e-1"}
		}),
		KindAuthRequired: with(KindAuthRequired, func(e *Event) {
			e.Turn = 0
			e.Auth = &AuthRequest{ID: "auth-3", Call: "session/new", Message: "Sign in", Methods: []AuthOption{
				{ID: "key", Name: "API key", Description: "paste a key", Type: AuthTypeEnvVar, Link: "https://example.com/keys",
					Vars: []acpclient.AuthVar{{Name: "OPENAI_API_KEY", Label: "Key", Secret: true, Optional: true}}},
				{ID: "login", Name: "Log in", Type: AuthTypeTerminal, Command: "agent", Args: []string{"login"}, Env: map[string]string{"NO_BROWSER": "1"}},
			}}
		}),
		KindTodos: with(KindTodos, func(e *Event) {
			e.Todos = []Todo{{ID: "t1", Number: 1, Content: "Fix", Description: "the bug", Status: "in_progress", ActiveForm: "Fixing",
				Owner: "me", Blocks: []string{"t2"}, BlockedBy: []string{"t0"}, CreatedAt: "2026-03-01T09:00:00Z", UpdatedAt: "2026-03-01T09:30:00Z",
				Task: json.RawMessage(`{"id":"t1","project":"p"}`)}}
			e.Plan = []acpclient.PlanEntry{{Content: "Fix", Priority: "medium", Status: "in_progress"}}
		}),
		KindNotice: with(KindNotice, func(e *Event) { e.Text = "Recovered from a backend failure" }),
		KindNotice + "+agent": with(KindNotice, func(e *Event) {
			e.Text = "Rate limited"
			e.Notice = &Notice{Severity: "warning", Title: "Rate limited", Description: "Retrying in 30s", Meta: json.RawMessage(`{"x":1}`)}
		}),
		KindQueue: with(KindQueue, func(e *Event) {
			e.Queue = &QueueUpdate{Change: "paused", ID: "q-1", Reason: "turn 2 failed: overloaded", Paused: true,
				Prompts: []QueuedPrompt{{ID: "q-1", Content: []acpclient.ContentBlock{acpclient.TextBlock("and the docs")}, Text: "and the docs", Queued: at}}}
		}),
		"user_text (steer)": with(KindUserText, func(e *Event) { e.Text, e.Steer = "Use the other API", SteerExtension }),
		KindAuthority: with(KindAuthority, func(e *Event) {
			e.Turn = 0
			e.Authority = &AuthorityState{State: AuthorityAgentAutonomous, Reason: `launch flag "--approval full-access" acts without asking`,
				HostMode: ModeAsk, ReadOnly: true, AgentMode: "code", Option: "approval", Value: "never", Flag: "--approval full-access", Blocked: true}
		}),
		KindChanges: with(KindChanges, func(e *Event) {
			e.Changes = &Changes{Op: "restore", From: "5b1e0c9a4f7d2e8b3a6c1d0f9e8d7c6b5a4f3e2d", To: "8c2d1e0f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d",
				Files:   []checkpoint.Change{{Status: "R", Path: "b.go", OldPath: "a.go", Added: 1, Removed: 2}, {Status: "M", Path: "img.png", Binary: true}},
				Skipped: []checkpoint.Skipped{{Path: "big.bin", Reason: "larger than 8388608 bytes"}},
				Path:    "/w/a.go", OldText: "old\n", NewText: "new\n", Created: true, Restored: 3}
		}),
		KindDecision: with(KindDecision, func(e *Event) {
			e.Decision = &Decision{Request: "perm-1", Type: "permission", Outcome: "cancelled", OptionID: "", By: "policy", Rule: "Ask mode cancels permission requests"}
		}),
	}
}

// kindConstants returns the values of every Kind constant declared in the
// package, read from its source, so that a new kind cannot be forgotten.
func kindConstants(t *testing.T) []Kind {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var kinds []Kind
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			spec, ok := n.(*ast.ValueSpec)
			if !ok {
				return true
			}
			if typ, ok := spec.Type.(*ast.Ident); !ok || typ.Name != "Kind" {
				return true
			}
			for _, v := range spec.Values {
				lit, ok := v.(*ast.BasicLit)
				if !ok {
					t.Fatalf("%s: a Kind constant that is not a string literal", fset.Position(v.Pos()))
				}
				s, _ := strconv.Unquote(lit.Value)
				kinds = append(kinds, Kind(s))
			}
			return true
		})
	}
	if len(kinds) < 20 {
		t.Fatalf("found only %d Kind constants: %q", len(kinds), kinds)
	}
	return kinds
}

// withoutLiveState is ev with its requests reduced to their data and Err
// removed, for comparing an event with its decoded copy.
func withoutLiveState(ev Event) Event {
	ev.Err = nil
	if p := ev.Permission; p != nil {
		ev.Permission = &PermissionRequest{ID: p.ID, Tool: p.Tool, Options: p.Options}
	}
	if q := ev.Elicitation; q != nil {
		ev.Elicitation = &ElicitationRequest{ID: q.ID, Message: q.Message, Mode: q.Mode, Schema: q.Schema, URL: q.URL, ElicitationID: q.ElicitationID, ToolCallID: q.ToolCallID}
	}
	if a := ev.Auth; a != nil {
		ev.Auth = &AuthRequest{ID: a.ID, Call: a.Call, Message: a.Message, Methods: a.Methods}
	}
	return ev
}

// TestEventRoundTripsEveryKind: json.Unmarshal of json.Marshal(ev) gives
// back an equal Event for a filled example of every kind, the error as an
// *EventError with its message and code, and encoding that again gives the
// same bytes.
func TestEventRoundTripsEveryKind(t *testing.T) {
	examples := filledEvents()
	for _, kind := range kindConstants(t) {
		t.Run(string(kind), func(t *testing.T) {
			ev, ok := examples[kind]
			if !ok {
				t.Fatalf("no example event of kind %s: add one to filledEvents", kind)
			}
			data, err := json.Marshal(ev)
			if err != nil {
				t.Fatal(err)
			}
			var back Event
			if err := json.Unmarshal(data, &back); err != nil {
				t.Fatalf("decoding %s: %v", data, err)
			}
			if got, want := withoutLiveState(back), withoutLiveState(ev); !reflect.DeepEqual(got, want) {
				t.Errorf("round trip of %s:\n got %+v\nwant %+v", data, got, want)
			}
			if !reflect.DeepEqual(back.Err, ev.Err) {
				t.Errorf("error %#v came back as %#v", ev.Err, back.Err)
			}
			again, err := json.Marshal(back)
			if err != nil || string(again) != string(data) {
				t.Errorf("encoding the decoded event: %s, %v\nfirst: %s", again, err, data)
			}
		})
	}
}

// TestEventErrorCarriesTheCode: an agent's JSON-RPC error, however deeply
// wrapped, is encoded with its code; other errors with their message only;
// the decoded error is an *EventError whose Error() is the message.
func TestEventErrorCarriesTheCode(t *testing.T) {
	rpc := &acpclient.CallError{Method: "session/prompt", Err: &acpclient.Error{Code: -32603, Message: "overloaded", Data: json.RawMessage(`{"retry":true}`)}}
	tests := []struct {
		err  error
		code int
	}{
		{fmt.Errorf("bridge: prompt: %w", rpc), -32603},
		{fmt.Errorf("bridge: %w", acpclient.NewError(acpclient.CodeAuthRequired, "sign in")), acpclient.CodeAuthRequired},
		{&acpclient.ExitError{Stderr: "boom"}, 0},
		{fmt.Errorf("again: %w", &EventError{Message: "decoded before", Code: 7}), 7},
	}
	for _, tt := range tests {
		data, err := json.Marshal(Event{Kind: KindError, Err: tt.err})
		if err != nil {
			t.Fatal(err)
		}
		var back Event
		if err := json.Unmarshal(data, &back); err != nil {
			t.Fatal(err)
		}
		var e *EventError
		if !errors.As(back.Err, &e) {
			t.Fatalf("%s: Err %T is not an *EventError", data, back.Err)
		}
		if e.Code != tt.code || e.Message != tt.err.Error() || back.Err.Error() != tt.err.Error() {
			t.Errorf("%s decoded as %+v; want message %q, code %d", data, e, tt.err.Error(), tt.code)
		}
	}
	data, _ := json.Marshal(Event{Kind: KindText, Text: "x"})
	if strings.Contains(string(data), `"error"`) {
		t.Errorf("an event without Err has an error key: %s", data)
	}
}

// TestDecodedRequestsAreRecords: a request read back from JSON keeps its
// data, is Done, and every answer method returns ErrRequestRecord instead
// of panicking on the answer it has no agent for; so does a zero request
// an app builds by hand.
func TestDecodedRequestsAreRecords(t *testing.T) {
	examples := filledEvents()
	var events []Event
	for _, k := range []Kind{KindPermission, KindElicitation, KindAuthRequired} {
		data, err := json.Marshal(examples[k])
		if err != nil {
			t.Fatal(err)
		}
		var ev Event
		if err := json.Unmarshal(data, &ev); err != nil {
			t.Fatal(err)
		}
		events = append(events, ev)
	}
	perm, ask, auth := events[0].Permission, events[1].Elicitation, events[2].Auth
	if !perm.CanAllow() || perm.Options[1].OptionID != "reject" || ask.Message != "Which branch?" || auth.Methods[1].Command != "agent" {
		t.Fatalf("decoded requests lost their data: %+v %+v %+v", perm, ask, auth)
	}
	answers := map[string]func() error{
		"Allow":           perm.Allow,
		"Reject":          perm.Reject,
		"Accept":          func() error { return ask.Accept(map[string]any{"branch": "main"}) },
		"Decline":         ask.Decline,
		"Cancel":          ask.Cancel,
		"Answer":          func() error { return auth.Answer(AuthAnswer{MethodID: "key"}) },
		"Sign-in Decline": auth.Decline,
		"zero Allow":      (&PermissionRequest{}).Allow,
		"zero Reject":     (&PermissionRequest{}).Reject,
		"zero Accept":     func() error { return (&ElicitationRequest{}).Accept(nil) },
		"zero Answer":     func() error { return (&AuthRequest{}).Answer(AuthAnswer{}) },
	}
	for name, answer := range answers {
		if err := answer(); !errors.Is(err, ErrRequestRecord) {
			t.Errorf("%s on a record: %v, want ErrRequestRecord", name, err)
		}
	}
	for _, done := range []<-chan struct{}{perm.Done(), ask.Done(), auth.Done()} {
		select {
		case <-done:
		default:
			t.Error("a decoded request is not Done")
		}
	}
}

// TestEventJSONCommonKeys: the common keys keep their names and order, and
// the optional ones are left out when empty.
func TestEventJSONCommonKeys(t *testing.T) {
	ev := filledEvents()[KindText]
	ev.Replay, ev.Late = true, true
	data, _ := json.Marshal(ev)
	var keys []string
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.Token()
	for dec.More() {
		k, _ := dec.Token()
		keys = append(keys, k.(string))
		var skip json.RawMessage
		dec.Decode(&skip)
	}
	want := []string{"pos", "bridge", "key", "session", "seq", "turn", "kind", "time", "replay", "late", "text", "messageId"}
	if !slices.Equal(keys, want) {
		t.Errorf("keys %q, want %q", keys, want)
	}
	data, _ = json.Marshal(Event{Bridge: "a", Kind: KindExited})
	if want := `{"pos":0,"bridge":"a","seq":0,"kind":"exited","time":"0001-01-01T00:00:00Z"}`; string(data) != want {
		t.Errorf("agent-wide event %s, want %s", data, want)
	}
}
