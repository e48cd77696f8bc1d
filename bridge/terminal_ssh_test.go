package bridge

import (
	"context"
	"strings"
	"testing"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/acptest"
	"github.com/acphost/acphost/internal/sshtest"
)

// TestTerminalsFollowAnSSHAgent: with no Runner set, an agent started over
// SSH (also inside a profile's transport) gets its terminals on that host,
// under the remote wrapper: the command's parent is the wrapper there, not
// this process.
func TestTerminalsFollowAnSSHAgent(t *testing.T) {
	srv := sshtest.Start(t, nil)
	script := acptest.WriteScript(t, acptest.Script{Prompts: []acptest.Turn{{Steps: []acptest.Step{
		{Terminal: &acptest.Terminal{Command: "sh", Args: []string{"-c", `tr "\0" " " </proc/$PPID/cmdline`}}},
	}}}})
	tr := &acpclient.SSHTransport{Client: srv.Dial(t), Path: acptest.BuildBinary(t), Args: []string{"-script", script}}
	if sshTransportOf(&profileTransport{inner: tr}) != tr {
		t.Error("the SSH transport inside a profile's transport is not found")
	}
	h, rec := newHostAndRecorder(t, nil)
	b, err := h.Start(context.Background(), Config{ID: "remote", Transport: &profileTransport{launch: &Launch{Profile: &Profile{Name: "p"}}, inner: tr}, Terminals: &TerminalOptions{}})
	if err != nil {
		t.Fatal(err)
	}
	s, err := b.OpenSession(context.Background(), SessionConfig{Cwd: t.TempDir(), Policy: Policy{Mode: ModeBuild}})
	if err != nil {
		t.Fatal(err)
	}
	f := &termFixture{h: h, rec: rec, b: b, s: s}
	f.prompt(t, "run")
	if got := f.report("terminal:"); !strings.Contains(got, "acphost-agent") {
		t.Errorf("the command did not run under the remote wrapper: %s", got)
	}
}
