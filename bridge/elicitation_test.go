package bridge

import (
	"context"
	"strings"
	"testing"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/acptest"
	"github.com/acphost/acphost/internal/waitfor"
)

func TestElicitation(t *testing.T) {
	ask := acptest.Step{Request: &acptest.Request{Method: "elicitation/create", Params: raw(
		`{"sessionId":"sess_1","message":"Which name?","mode":"form","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}`)}}
	script := acptest.Script{NewSession: acptest.NewSessionScript{SessionIDs: []string{"sess_1"}},
		Prompts: []acptest.Turn{{Steps: []acptest.Step{ask}}}}

	t.Run("answered by the app", func(t *testing.T) {
		h, rec := newHostAndRecorder(t, nil)
		cfg := agentConfig(t, "e", script)
		cfg.ElicitationModes = []string{"form"}
		b, err := h.Start(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		s, _ := b.OpenSession(waitfor.Context(t), SessionConfig{Cwd: "/w"})
		go func() {
			ev := rec.waitFor("question", func(ev Event) bool { return ev.Kind == KindElicitation })
			if ev.Elicitation.Message != "Which name?" || !strings.Contains(string(ev.Elicitation.Schema), "name") {
				t.Errorf("question %+v", ev.Elicitation)
			}
			ev.Elicitation.Accept(map[string]any{"name": "Ada"})
		}()
		if _, err := s.Prompt(waitfor.Context(t), acpclient.TextBlock("x")); err != nil {
			t.Fatal(err)
		}
		rec.waitFor("answer seen by the agent", func(ev Event) bool {
			return strings.Contains(ev.Text, `"action":"accept"`) && strings.Contains(ev.Text, `"Ada"`)
		})
	})

	t.Run("not offered unless the app renders it", func(t *testing.T) {
		h, rec := newHostAndRecorder(t, nil)
		b, _ := h.Start(context.Background(), agentConfig(t, "n", script))
		if b.InitializeResponse() == nil {
			t.Fatal("no agent")
		}
		s, _ := b.OpenSession(waitfor.Context(t), SessionConfig{Cwd: "/w"})
		if _, err := s.Prompt(waitfor.Context(t), acpclient.TextBlock("x")); err != nil {
			t.Fatal(err)
		}
		rec.waitFor("refusal", func(ev Event) bool { return strings.Contains(ev.Text, "error -32601") })
	})

	t.Run("cancelled with the turn", func(t *testing.T) {
		cancelScript := script
		cancelScript.Prompts = []acptest.Turn{{Steps: []acptest.Step{ask, {WaitCancel: true}}}}
		h, rec := newHostAndRecorder(t, nil)
		cfg := agentConfig(t, "c", cancelScript)
		cfg.ElicitationModes = []string{"form", "url"}
		b, _ := h.Start(context.Background(), cfg)
		s, _ := b.OpenSession(waitfor.Context(t), SessionConfig{Cwd: "/w"})
		done := make(chan string, 1)
		go func() { stop, _ := s.Prompt(waitfor.Context(t), acpclient.TextBlock("x")); done <- stop }()
		ev := rec.waitFor("question", func(ev Event) bool { return ev.Kind == KindElicitation })
		s.Cancel()
		waitfor.Closed(t, ev.Elicitation.Done(), "the elicitation to be settled")
		if err := ev.Elicitation.Accept(nil); err != ErrAlreadyAnswered {
			t.Errorf("answering after the cancel: %v", err)
		}
		if stop := waitfor.Recv(t, done, "the call to return"); stop != acpclient.StopCancelled {
			t.Errorf("stop reason %q", stop)
		}
		rec.waitFor("agent saw cancel", func(ev Event) bool { return strings.Contains(ev.Text, `"action":"cancel"`) })
	})
}
