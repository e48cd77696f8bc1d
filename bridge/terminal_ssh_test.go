package bridge

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/acptest"
	"github.com/acphost/acphost/bridge/terminal"
	"github.com/acphost/acphost/internal/sshtest"
	"github.com/acphost/acphost/internal/waitfor"
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
	b, err := h.Start(context.Background(), Config{ID: "remote", Transport: &profileTransport{launch: &Launch{Profile: &Profile{Name: "p"}}, inner: tr}, Terminals: &terminal.Options{}})
	if err != nil {
		t.Fatal(err)
	}
	s, err := b.OpenSession(waitfor.Context(t), SessionConfig{Cwd: t.TempDir(), Policy: Policy{Mode: ModeBuild}})
	if err != nil {
		t.Fatal(err)
	}
	f := &termFixture{h: h, rec: rec, b: b, s: s}
	f.prompt(t, "run")
	// The command's parent is the remote reaper (python3, with the wrapper's
	// program in its arguments), or the wrapper itself without one.
	if got := f.report("terminal:"); !strings.Contains(got, "acphost-agent") && !strings.Contains(got, "The remote reaper of a terminal command") {
		t.Errorf("the command did not run under the remote wrapper or its reaper: %s", got)
	}
}

// gatedRunner is a runner whose StartTerminal waits for gate, as a start
// on a slow SSH host would.
type gatedRunner struct {
	terminal.Local
	started chan struct{}
	gate    chan struct{}
}

func (g gatedRunner) Start(ctx context.Context, cmd terminal.Command) (terminal.Process, error) {
	close(g.started)
	<-g.gate
	return g.Local.Start(ctx, cmd)
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
	f := newTermFixture(t, script, Policy{Mode: ModeBuild}, &terminal.Options{Runner: runner})
	starting := make(chan error, 1)
	go func() {
		_, err := f.s.Prompt(waitfor.Context(t), acpclient.TextBlock("start"))
		starting <- err
	}()
	waitfor.Closed(t, runner.started, "the start to begin")
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
	if err := waitfor.Recv(t, starting, "the start to begin"); err != nil {
		t.Fatal(err)
	}
	f.report(`terminal: exit 0 signal none truncated false output "started\n"`)
}

// TestSSHTerminalsShareOneSFTPSession: the terminals of a bridge resolve
// their directories (the cwd and the session's roots, for every create)
// in one SFTP session on the connection, not one per call; a new
// connection (a redial after a drop) gets a new one, and the session ends
// when the bridge closes.
func TestSSHTerminalsShareOneSFTPSession(t *testing.T) {
	srv := sshtest.Start(t, nil)
	run := acptest.Step{Terminal: &acptest.Terminal{Command: "echo", Args: []string{"ran"}}}
	script := acptest.Script{Prompts: []acptest.Turn{
		{Match: "three", Steps: []acptest.Step{run, run, run}},
		{Match: "one", Steps: []acptest.Step{run}},
	}}
	var (
		mu  sync.Mutex
		cur = srv.Dial(t)
	)
	dial := func(context.Context) (*ssh.Client, error) {
		mu.Lock()
		defer mu.Unlock()
		return cur, nil
	}
	f := newTermFixture(t, script, Policy{Mode: ModeBuild}, &terminal.Options{Runner: terminal.SSH{Dial: dial}})
	ran := func(want int) {
		t.Helper()
		n := 0
		for _, ev := range f.rec.snapshot() {
			if ev.Kind == KindText && ev.Text == `terminal: exit 0 signal none truncated false output "ran\n"` {
				n++
			}
		}
		if n != want {
			t.Fatalf("%d commands reported their run, want %d", n, want)
		}
	}
	f.prompt(t, "three")
	ran(3)
	if opened, _ := srv.SFTPSessions(); opened != 1 {
		t.Errorf("%d SFTP sessions opened for 3 terminals, want 1 shared", opened)
	}
	srv.DropConnections()
	mu.Lock()
	cur = srv.Dial(t)
	mu.Unlock()
	f.prompt(t, "one")
	ran(4)
	if opened, _ := srv.SFTPSessions(); opened != 2 {
		t.Errorf("%d SFTP sessions opened in all, want 2: one per connection", opened)
	}
	f.b.Close()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if _, live := srv.SFTPSessions(); live == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the SFTP session outlived the bridge")
		}
	}
}

// TestSSHTerminalsReportToTheBridgesLogger: the SSH runner of a bridge's
// terminals, the app's or the one the bridge picks for an agent on an SSH
// host, reports slow starts to the bridge's logger unless it has its own.
func TestSSHTerminalsReportToTheBridgesLogger(t *testing.T) {
	h, _ := newHostAndRecorder(t, nil)
	logger, own := slog.New(slog.DiscardHandler), slog.New(slog.DiscardHandler)
	dial := func(context.Context) (*ssh.Client, error) { return nil, nil }
	for _, tt := range []struct {
		name string
		cfg  Config
		want *slog.Logger
	}{
		{"app's runner", Config{Logger: logger, Terminals: &terminal.Options{Runner: terminal.SSH{Dial: dial}}}, logger},
		{"app's runner with a logger", Config{Logger: logger, Terminals: &terminal.Options{Runner: terminal.SSH{Dial: dial, Logger: own}}}, own},
		{"agent's host", Config{Logger: logger, Transport: &acpclient.SSHTransport{Dial: dial, Path: "agent"}, Terminals: &terminal.Options{}}, logger},
	} {
		r, ok := newBridge(h, tt.cfg).terminalRunner().(terminal.SSH)
		if !ok || r.Logger != tt.want {
			t.Errorf("%s: runner %#v, want terminal.SSH with the logger", tt.name, r)
		}
	}
}
