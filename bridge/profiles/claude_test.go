package profiles

import (
	"fmt"
	"strings"
	"testing"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/acptest"
	"github.com/acphost/acphost/bridge"
	"github.com/acphost/acphost/internal/bridgetest"
	"github.com/acphost/acphost/internal/fakebin"
	"github.com/acphost/acphost/internal/schematest"
)

// TestClaudeSubagentToolParent: the tool calls a Claude Code subagent
// makes carry their task's id in _meta.claudeCode.parentToolUseId; the
// profile puts it in ToolCall.Parent, which later updates without it keep
// and malformed values leave empty, and the SessionView's rows show it.
func TestClaudeSubagentToolParent(t *testing.T) {
	updates := []string{
		`{"sessionUpdate":"tool_call","toolCallId":"task_1","title":"Explore the parser","kind":"think","status":"in_progress"}`,
		`{"sessionUpdate":"tool_call","toolCallId":"read_1","title":"Read a.go","kind":"read","status":"pending","_meta":{"claudeCode":{"toolName":"Read","parentToolUseId":"task_1"}}}`,
		`{"sessionUpdate":"tool_call_update","toolCallId":"read_1","status":"completed","_meta":{"claudeCode":{"toolName":"Read"}}}`,
		`{"sessionUpdate":"tool_call","toolCallId":"odd_1","title":"Odd","status":"pending","_meta":{"claudeCode":{"parentToolUseId":42}}}`,
		`{"sessionUpdate":"tool_call_update","toolCallId":"task_1","status":"completed"}`,
	}
	v := schematest.Load(t)
	var steps []acptest.Step
	for _, u := range updates {
		if err := v.ValidateAgentMessage([]byte(fmt.Sprintf(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"c1","update":%s}}`, u))); err != nil {
			t.Errorf("%s: %v", u, err)
		}
		steps = append(steps, acptest.Step{Update: bridgetest.Raw(u)})
	}
	script := acptest.Script{NewSession: acptest.NewSessionScript{SessionIDs: []string{"c1"}}, Prompts: []acptest.Turn{{Steps: steps}}}
	h, rec := bridgetest.NewHost(t, nil)
	in := fakebin.Install(t, t.TempDir(), "claude-agent-acp", script, "")
	b, err := h.StartProfile(bridgetest.Context(t), Claude, bridge.LaunchOptions{Binary: in.Path}, bridge.Config{ID: "claude"})
	if err != nil {
		t.Fatal(err)
	}
	s, err := b.OpenSession(bridgetest.Context(t), bridge.SessionConfig{Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Prompt(bridgetest.Context(t), acpclient.TextBlock("go")); err != nil {
		t.Fatal(err)
	}
	rec.WaitFor("turn end", func(ev bridge.Event) bool { return ev.Kind == bridge.KindTurnEnd })
	var got []string
	var view bridge.SessionView
	for _, ev := range rec.Of(b.ID(), s.ID()) {
		view.Apply(ev)
		if ev.Tool != nil {
			got = append(got, string(ev.Kind)+" "+ev.Tool.ID+" parent="+ev.Tool.Parent)
		}
	}
	want := []string{
		"tool_start task_1 parent=",
		"tool_start read_1 parent=task_1",
		"tool_end read_1 parent=task_1",
		"tool_start odd_1 parent=",
		"tool_end task_1 parent=",
		"tool_end odd_1 parent=", // closed by the turn's end
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("tool events\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	var rows []string
	for _, r := range view.Tools {
		rows = append(rows, r.Tool.ID+"<"+r.Tool.Parent)
	}
	if strings.Join(rows, " ") != "task_1< read_1<task_1 odd_1<" {
		t.Errorf("view rows %q", rows)
	}
}
