package bridge

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/acptest"
	"github.com/acphost/acphost/bridge/terminal"
	"github.com/acphost/acphost/internal/waitfor"
)

// TestTerminalOutputIsTurnOutput: a transient failure after a command the
// agent ran (through terminal/*, or its own, reported in _meta) printed is
// not sent again: the prompt would run the command a second time. Without
// the command's output the same failure is retried.
func TestTerminalOutputIsTurnOutput(t *testing.T) {
	flaky := &acptest.Error{Code: -32603, Message: "flaky backend"}
	for _, tt := range []struct {
		name    string
		steps   []acptest.Step
		retried bool
	}{
		{"client terminal", []acptest.Step{elsewhere(shell(`echo printed`)), elsewhere(onTerminal("terminal/wait_for_exit", "term-1"))}, false},
		{"agent's own command", []acptest.Step{{Update: json.RawMessage(`{"sessionUpdate":"tool_call_update","toolCallId":"toolu_1","_meta":{"terminal_output":{"terminal_id":"toolu_1","data":"printed\n"}}}`)}}, false},
		{"no output", nil, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			script := acptest.Script{Prompts: []acptest.Turn{{Match: "go", Steps: tt.steps, Error: flaky}}}
			tr := &acptest.Transport{Script: script}
			provider := &Provider{
				TransientError: func(err error) bool { return strings.Contains(err.Error(), "flaky backend") },
				RetryBackoff:   []time.Duration{time.Millisecond},
			}
			h, _ := newHostAndRecorder(t, nil)
			b, err := h.Start(context.Background(), Config{ID: "retry", Transport: tr, Provider: provider, Terminals: &terminal.Options{}})
			if err != nil {
				t.Fatal(err)
			}
			s, err := b.OpenSession(waitfor.Context(t), SessionConfig{Cwd: t.TempDir(), Policy: Policy{Mode: ModeBuild}})
			if err != nil {
				t.Fatal(err)
			}
			// The other session gets the fake agent's reports of its
			// requests, text that would count as this turn's output.
			if _, err := b.OpenSession(waitfor.Context(t), SessionConfig{Cwd: t.TempDir()}); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Prompt(waitfor.Context(t), acpclient.TextBlock("go")); err == nil {
				t.Fatal("the failing turn succeeded")
			}
			prompts := 0
			for _, m := range tr.Agents()[0].Received() {
				if m.Method == "session/prompt" {
					prompts++
				}
			}
			if want := map[bool]int{true: 2, false: 1}[tt.retried]; prompts != want {
				t.Errorf("the agent got %d prompts, want %d", prompts, want)
			}
		})
	}
}

// elsewhere makes the fake agent report a request's answer in the second
// session (sess_2), not in the one the request is about.
func elsewhere(st acptest.Step) acptest.Step {
	st.SessionID = "sess_2"
	return st
}
