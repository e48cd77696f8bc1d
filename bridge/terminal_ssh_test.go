package bridge

import (
	"context"
	"strings"
	"testing"
	"time"

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

// gatedRunner is a runner whose StartTerminal waits for gate, as a start
// on a slow SSH host would.
type gatedRunner struct {
	LocalTerminals
	started chan struct{}
	gate    chan struct{}
}

func (g gatedRunner) StartTerminal(ctx context.Context, cmd TerminalCommand) (TerminalProcess, error) {
	close(g.started)
	<-g.gate
	return g.LocalTerminals.StartTerminal(ctx, cmd)
}

// TestTerminalCreateDoesNotHoldTheConnection: while one session's command
// is still starting, the agent's connection serves another session; the
// create is answered once the start is done.
func TestTerminalCreateDoesNotHoldTheConnection(t *testing.T) {
	script := acptest.Script{Prompts: []acptest.Turn{
		{Match: "start", Steps: []acptest.Step{{Terminal: &acptest.Terminal{Command: "echo", Args: []string{"started"}}}}},
		{Steps: []acptest.Step{{Text: "still served"}}},
	}}
	runner := gatedRunner{started: make(chan struct{}), gate: make(chan struct{})}
	f := newTermFixture(t, script, Policy{Mode: ModeBuild}, &TerminalOptions{Runner: runner})
	starting := make(chan error, 1)
	go func() {
		_, err := f.s.Prompt(context.Background(), acpclient.TextBlock("start"))
		starting <- err
	}()
	<-runner.started
	// Bounded, for loaded machines: held up, they would never return.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	other, err := f.b.OpenSession(ctx, SessionConfig{Cwd: f.dir, Policy: Policy{Mode: ModeBuild}})
	if err != nil {
		close(runner.gate)
		t.Fatal(err)
	}
	if _, err := other.Prompt(ctx, acpclient.TextBlock("hello")); err != nil {
		close(runner.gate)
		t.Fatal(err)
	}
	f.rec.waitFor("the other session's text", func(ev Event) bool { return ev.Kind == KindText && ev.Key == other.Key() && ev.Text == "still served" })
	close(runner.gate)
	if err := <-starting; err != nil {
		t.Fatal(err)
	}
	f.report(`terminal: exit 0 signal none truncated false output "started\n"`)
}
