package main

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/acphost/acphost/acptest"
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
	h.event(bridge.Event{Kind: bridge.KindAuthority, Session: "s1", Authority: &bridge.AuthorityState{
		State: bridge.AuthorityAgentAutonomous, Reason: `agent mode "yolo" acts without asking`, HostMode: bridge.ModeBuild, Blocked: true, ConsentNeeded: true}})
	want := "acprun: session s1: authority protected (agent mode \"default\" asks before acting)\n" +
		"acprun: session s1: authority agent-autonomous (agent mode \"acceptEdits\" acts without asking); prompts are refused\n" +
		"acprun: session s1: authority agent-autonomous (agent mode \"yolo\" acts without asking); it runs only with your consent\n"
	if diag.String() != want {
		t.Fatalf("diagnostics:\n%q\nwant:\n%q", diag.String(), want)
	}
}

// TestDemoReportsAuthority: the demo agent's mode table says both its
// modes ask, so its session is protected; an --agent without a table is
// unknown, and acprun says so instead of calling it protected.
func TestDemoReportsAuthority(t *testing.T) {
	t.Parallel()
	r := runAcprun(t, "--mode", "ask", "--cwd", t.TempDir(), "Add", "a", "note")
	if r.code != exitOK {
		t.Fatalf("exit status %d, want 0; stderr:\n%s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, `authority protected (agent mode "default" asks before acting)`) {
		t.Errorf("stderr does not report the demo as protected: %q", r.stderr)
	}
	script := acptest.WriteScript(t, acptest.Script{Prompts: []acptest.Turn{{Steps: []acptest.Step{{Text: "hi"}}}}})
	agent := fmt.Sprintf("'%s' -script '%s'", acptest.BuildBinary(t), script)
	r = runAcprun(t, "--mode", "ask", "--agent", agent, "--cwd", t.TempDir(), "hi")
	if r.code != exitOK {
		t.Fatalf("--agent: exit status %d, want 0; stderr:\n%s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "authority unknown (no mode table for this agent)") {
		t.Errorf("--agent: stderr does not report the authority as unknown: %q", r.stderr)
	}
}
