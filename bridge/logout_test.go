package bridge

import (
	"errors"
	"strings"
	"testing"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/acptest"
)

// Logout sends the protocol's logout to the agent and reports it with an
// agent-wide notice; the agent then asks for a sign-in again, which comes
// to the app as auth_required.
func TestLogoutSignsTheAgentOut(t *testing.T) {
	h, rec := newHostAndRecorder(t, nil)
	answerAuth(rec, func(r *AuthRequest) { r.Answer(AuthAnswer{MethodID: "oauth"}) })
	tr := &acptest.Transport{Script: acptest.Script{
		Initialize: acptest.InitializeScript{AuthMethods: raw(`[{"id":"oauth","name":"Log in"}]`),
			AgentCapabilities: raw(`{"loadSession":true,"auth":{"logout":{}}}`)},
		NewSession: acptest.NewSessionScript{RequireAuth: "oauth"},
	}}
	b, err := h.Start(ctxT(t), Config{ID: "l", Transport: tr})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.OpenSession(ctxT(t), SessionConfig{Cwd: "/w"}); err != nil {
		t.Fatal(err)
	}
	if err := b.Logout(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	if n := len(sentChecked(t, tr, "logout")); n != 1 {
		t.Fatalf("the agent got %d logout requests, want 1", n)
	}
	ev := rec.waitFor("the logout notice", func(ev Event) bool { return ev.Kind == KindNotice && ev.Text == logoutNotice })
	if ev.Bridge != "l" || ev.Key != "" || ev.Session != "" {
		t.Errorf("logout notice %+v, want agent-wide on bridge l", ev)
	}
	// Signed out, the agent wants a sign-in for the next session.
	if _, err := b.OpenSession(ctxT(t), SessionConfig{Cwd: "/w"}); err != nil {
		t.Fatal(err)
	}
	var asked int
	for _, ev := range rec.snapshot() {
		if ev.Kind == KindAuthRequired {
			asked++
		}
	}
	if asked != 2 {
		t.Errorf("%d auth_required events, want 2 (before the logout and after it)", asked)
	}
}

// An agent that does not advertise auth.logout is not sent one: Logout
// fails with acpclient.ErrUnsupported, naming the bridge, and reports
// nothing.
func TestLogoutUnsupported(t *testing.T) {
	h, rec := newHostAndRecorder(t, nil)
	tr := &acptest.Transport{}
	b, err := h.Start(ctxT(t), Config{ID: "l", Transport: tr})
	if err != nil {
		t.Fatal(err)
	}
	err = b.Logout(ctxT(t))
	if !errors.Is(err, acpclient.ErrUnsupported) || !strings.Contains(err.Error(), "bridge l") || !strings.Contains(err.Error(), "logout") {
		t.Fatalf("Logout error %v, want ErrUnsupported naming bridge l and logout", err)
	}
	if n := countMethod(tr, "logout"); n != 0 {
		t.Errorf("the agent got %d logout requests, want none", n)
	}
	for _, ev := range rec.snapshot() {
		if ev.Kind == KindNotice {
			t.Errorf("unexpected notice %q", ev.Text)
		}
	}
}
