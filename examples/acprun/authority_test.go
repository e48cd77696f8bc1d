package main

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/acphost/acphost/bridge"
)

// TestHumanReportsAuthority: each authority event is one line on the
// diagnostics stream: the state, why, and whether prompts are refused.
func TestHumanReportsAuthority(t *testing.T) {
	var diag bytes.Buffer
	h := newHuman(io.Discard, &diag, false, palette{})
	h.event(bridge.Event{Kind: bridge.KindAuthority, Session: "s1", Authority: &bridge.AuthorityState{
		State: bridge.AuthorityProtected, Reason: `agent mode "default" asks before acting`, HostMode: bridge.ModeAsk}})
	h.event(bridge.Event{Kind: bridge.KindAuthority, Session: "s1", Authority: &bridge.AuthorityState{
		State: bridge.AuthorityAgentAutonomous, Reason: `agent mode "acceptEdits" acts without asking`, HostMode: bridge.ModeAsk, Blocked: true}})
	want := "acprun: session s1: authority protected (agent mode \"default\" asks before acting)\n" +
		"acprun: session s1: authority agent-autonomous (agent mode \"acceptEdits\" acts without asking); prompts are refused\n"
	if diag.String() != want {
		t.Fatalf("diagnostics:\n%q\nwant:\n%q", diag.String(), want)
	}
}

// TestDemoReportsAuthority: the demo agent has no mode table, and acprun
// says so when the session opens instead of calling it protected.
func TestDemoReportsAuthority(t *testing.T) {
	t.Parallel()
	r := runAcprun(t, "--mode", "ask", "--cwd", t.TempDir(), "Add", "a", "note")
	if r.code != exitOK {
		t.Fatalf("exit status %d, want 0; stderr:\n%s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "authority unknown (no mode table for this agent)") {
		t.Errorf("stderr does not report the authority: %q", r.stderr)
	}
}
