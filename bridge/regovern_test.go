package bridge

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/acptest"
)

// TestPolicyChangeGovernsPendingRequests: a permission request asked in
// Build and still waiting is settled again when the policy changes: the
// rules that answer by themselves answer it (a decision by "policy" naming
// the rule), and the app's later answer sends nothing and fails; in Build
// it keeps waiting for the app.
func TestPolicyChangeGovernsPendingRequests(t *testing.T) {
	script := acptest.Script{Prompts: []acptest.Turn{{Steps: []acptest.Step{
		{Permission: &acptest.Permission{ToolCall: raw(`{"toolCallId":"t1","title":"rm -rf build"}`)}},
	}}}}
	for i, tt := range []struct {
		name    string
		policy  Policy
		want    Decision // zero: the app still decides
		agentGt string
	}{
		{"ask", Policy{Mode: ModeAsk}, Decision{Outcome: "cancelled", By: "policy", Rule: "Ask mode cancels permission requests"}, "permission: cancelled"},
		{"plan", Policy{Mode: ModePlan}, Decision{Outcome: "cancelled", By: "policy", Rule: "Plan mode cancels permission requests"}, "permission: cancelled"},
		{"read-only", Policy{Mode: ModeBuild, ReadOnly: true}, Decision{Outcome: "cancelled", By: "policy", Rule: "read-only tool policy"}, "permission: cancelled"},
		{"full", Policy{Mode: ModeFull}, Decision{Outcome: "allowed", OptionID: "allow", By: "policy", Rule: "Full mode allows once"}, "permission: selected allow"},
		{"build", Policy{Mode: ModeBuild}, Decision{}, "permission: selected allow"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h, rec := newHostAndRecorder(t, nil)
			id := fmt.Sprintf("gov%d", i)
			b, err := h.Start(ctxT(t), agentConfig(t, id, script))
			if err != nil {
				t.Fatal(err)
			}
			s, err := b.OpenSession(ctxT(t), SessionConfig{Cwd: t.TempDir(), Policy: Policy{Mode: ModeBuild}})
			if err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { _, err := s.Prompt(ctxT(t), acpclient.TextBlock("x")); done <- err }()
			perm := rec.waitFor("permission event", func(ev Event) bool { return ev.Kind == KindPermission }).Permission

			s.SetPolicy(tt.policy)
			err = perm.Allow()
			if tt.want == (Decision{}) {
				if err != nil {
					t.Fatalf("Allow in Build after SetPolicy(Build): %v", err)
				}
				tt.want = Decision{Outcome: "allowed", OptionID: "allow", By: "app"}
			} else if !errors.Is(err, ErrAlreadyAnswered) || !strings.Contains(err.Error(), tt.want.Rule) {
				t.Fatalf("Allow after SetPolicy(%+v) returned %v, want ErrAlreadyAnswered naming %q", tt.policy, err, tt.want.Rule)
			}
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			rec.waitFor("turn_end", func(ev Event) bool { return ev.Kind == KindTurnEnd })
			tt.want.Request, tt.want.Type = perm.ID, "permission"
			if got := decisionsOf(t, rec.of(id, s.ID())); len(got) != 1 || got[perm.ID] != tt.want {
				t.Errorf("decisions %+v, want %+v", got, tt.want)
			}
			var said string
			for _, ev := range rec.of(id, s.ID()) {
				if ev.Kind == KindText {
					said += ev.Text
				}
			}
			if !strings.Contains(said, tt.agentGt) || strings.Count(said, "permission:") != 1 {
				t.Errorf("the agent got %q, want only %q", said, tt.agentGt)
			}
		})
	}
}

// TestAuthorityChangeGovernsPendingRequests: a permission request waiting
// when the session's authority becomes blocked (the agent switched itself
// to a mode that acts unasked and cannot be moved back) is cancelled by
// that rule, and the app's later Allow sends nothing.
func TestAuthorityChangeGovernsPendingRequests(t *testing.T) {
	script := acptest.Script{
		NewSession: acptest.NewSessionScript{Modes: raw(`{"currentModeId":"default","availableModes":[{"id":"default","name":"Default"},{"id":"yolo","name":"Yolo"}]}`)},
		Prompts: []acptest.Turn{
			{Match: "ask", Steps: []acptest.Step{{Permission: &acptest.Permission{ToolCall: raw(`{"toolCallId":"t1","title":"rm"}`)}}}},
			{Match: "switch", Steps: []acptest.Step{{SessionID: "sess_1", Update: raw(`{"sessionUpdate":"current_mode_update","currentModeId":"yolo"}`)}}},
		},
	}
	h, rec := newHostAndRecorder(t, nil)
	cfg := agentConfig(t, "govauth", script)
	cfg.AgentModes = &ModeTable{Safe: []string{"default"}, Auto: []string{"yolo"}}
	b, err := h.Start(ctxT(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	s1, err := b.OpenSession(ctxT(t), SessionConfig{Cwd: t.TempDir(), Policy: Policy{Mode: ModeBuild}})
	if err != nil {
		t.Fatal(err)
	}
	s2, err := b.OpenSession(ctxT(t), SessionConfig{Cwd: t.TempDir(), Policy: Policy{Mode: ModeBuild}})
	if err != nil {
		t.Fatal(err)
	}
	go s1.Prompt(context.Background(), acpclient.TextBlock("ask"))
	perm := rec.waitFor("permission event", func(ev Event) bool { return ev.Kind == KindPermission }).Permission
	if _, err := s2.Prompt(ctxT(t), acpclient.TextBlock("switch")); err != nil {
		t.Fatal(err)
	}
	d := rec.waitFor("decision", func(ev Event) bool { return ev.Kind == KindDecision }).Decision
	if d.Request != perm.ID || d.Outcome != "cancelled" || d.By != "policy" || !strings.Contains(d.Rule, "authority") {
		t.Fatalf("decision %+v, want the request cancelled by policy naming the authority", *d)
	}
	if err := perm.Allow(); !errors.Is(err, ErrAlreadyAnswered) {
		t.Fatalf("Allow after the authority blocked: %v", err)
	}
}
