package bridge

import (
	"testing"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/acptest"
)

// TestSessionKnowsTheAgentMode: AgentMode follows the mode the agent opened
// the session in, its agent_mode updates and a successful SetAgentMode; a
// refused SetAgentMode leaves it.
func TestSessionKnowsTheAgentMode(t *testing.T) {
	h, rec := newHostAndRecorder(t, nil)
	b, err := h.Start(ctxT(t), agentConfig(t, "modes", acptest.Script{
		NewSession: acptest.NewSessionScript{Modes: raw(`{"currentModeId":"ask","availableModes":[{"id":"ask","name":"Ask"},{"id":"code","name":"Code"}]}`)},
		Prompts: []acptest.Turn{{Steps: []acptest.Step{
			update(`{"sessionUpdate":"current_mode_update","currentModeId":"architect"}`),
		}}},
	}))
	if err != nil {
		t.Fatal(err)
	}
	s, err := b.OpenSession(ctxT(t), SessionConfig{Cwd: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if got := s.AgentMode(); got != "ask" {
		t.Fatalf("AgentMode after open = %q, want ask", got)
	}
	if err := s.SetAgentMode(ctxT(t), "code"); err != nil {
		t.Fatal(err)
	}
	if got := s.AgentMode(); got != "code" {
		t.Fatalf("AgentMode after SetAgentMode = %q, want code", got)
	}
	if _, err := s.Prompt(ctxT(t), acpclient.TextBlock("go")); err != nil {
		t.Fatal(err)
	}
	ev := rec.waitFor("agent_mode event", func(ev Event) bool { return ev.Kind == KindAgentMode && ev.AgentMode != "code" })
	if ev.AgentMode != "architect" || s.AgentMode() != "architect" {
		t.Fatalf("agent_mode event %q, AgentMode %q; want architect", ev.AgentMode, s.AgentMode())
	}
}

// TestRefusedSetAgentModeKeepsTheMode: the agent's refusal leaves AgentMode.
func TestRefusedSetAgentModeKeepsTheMode(t *testing.T) {
	h, _ := newHostAndRecorder(t, nil)
	b, err := h.Start(ctxT(t), agentConfig(t, "modes", acptest.Script{
		NewSession: acptest.NewSessionScript{Modes: raw(`{"currentModeId":"ask","availableModes":[{"id":"ask","name":"Ask"}]}`)},
		Methods:    map[string]acptest.Reply{"session/set_mode": {Error: &acptest.Error{Code: -32602, Message: "no such mode"}}},
	}))
	if err != nil {
		t.Fatal(err)
	}
	s, err := b.OpenSession(ctxT(t), SessionConfig{Cwd: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetAgentMode(ctxT(t), "x"); err == nil {
		t.Fatal("SetAgentMode to an unknown mode succeeded")
	}
	if got := s.AgentMode(); got != "ask" {
		t.Fatalf("AgentMode after a refused SetAgentMode = %q, want ask", got)
	}
}
