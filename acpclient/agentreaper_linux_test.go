package acpclient

import (
	"bufio"
	"bytes"
	"context"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// startDaemonAgent connects agentDaemonScript and returns it with its
// daemon's pid, which the test kills by pid should it survive.
func startDaemonAgent(t *testing.T, tr *CommandTransport) (*process, int) {
	t.Helper()
	tr.Path, tr.Args = "/bin/sh", []string{"-c", agentDaemonScript}
	tr.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir()}
	rwc, err := tr.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	p := rwc.(*process)
	t.Cleanup(func() { p.Close() })
	line, err := bufio.NewReader(p).ReadString('\n')
	daemon, perr := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || perr != nil || daemon <= 0 {
		t.Fatalf("the agent said %q (%v) instead of its daemon's pid", line, err)
	}
	t.Cleanup(func() { _ = killPid(daemon) }) // should it survive
	if !alive(daemon) {
		t.Fatalf("daemon %d is not running while the agent runs", daemon)
	}
	return p, daemon
}

// TestAgentDaemonEndsWithClose: on Linux an agent runs under a reaper, so
// a daemon it started with setsid and orphaned at once, which no sampling
// of its tree could have caught, ends with the agent's Close.
func TestAgentDaemonEndsWithClose(t *testing.T) {
	p, daemon := startDaemonAgent(t, &CommandTransport{})
	if p.stop.link == nil {
		t.Error("the agent runs without its reaper on Linux")
	}
	p.Close()
	waitGone(t, daemon, "the daemon of a closed agent")
	if exit := p.ExitError(); exit == nil || exit.Err != nil {
		t.Errorf("exit error %v, want the agent's clean exit", exit)
	}
}

// TestHostDeathEndsTheAgentsDaemon: a host killed with SIGKILL leaves
// neither its agent nor the daemon the agent orphaned, nor its reaper.
func TestHostDeathEndsTheAgentsDaemon(t *testing.T) {
	checkHostDeath(t, helperAgentDaemonHost, "agent")
}

// TestAgentFallsBackWithoutReaper: where this program cannot be run again
// as the reaper, the agent still runs, guarded as before (its group and
// sentinel), and the logger is told why its descendants may survive it.
func TestAgentFallsBackWithoutReaper(t *testing.T) {
	logged := &lockedBuffer{}
	tr := &CommandTransport{reaperPath: "/nonexistent/acphost-reaper", // as a mount without exec would refuse it
		Logger: slog.New(slog.NewTextHandler(logged, nil))}
	p, daemon := startDaemonAgent(t, tr)
	if p.stop.link != nil || p.stop.guard == nil || p.Pid() != p.stop.cmd.Process.Pid {
		t.Errorf("fallback agent: reaper %v, sentinel %v, pid %d of process %d", p.stop.link != nil, p.stop.guard != nil, p.Pid(), p.stop.cmd.Process.Pid)
	}
	p.Close()
	_ = killPid(daemon) // survives: what the warning says
	if !strings.Contains(logged.String(), "could not be started") {
		t.Errorf("logged %q, want that the reaper could not be started", logged.String())
	}
}

// TestAgentExitUnderReaper: an agent's exit error is its own, in os/exec's
// words, although its reaper is the process waited for.
func TestAgentExitUnderReaper(t *testing.T) {
	for script, want := range map[string]string{
		`echo bye >&2; exit 7`: "exit status 7",
		`kill -KILL $$`:        "signal: killed",
	} {
		rwc, err := Command("/bin/sh", "-c", script).Connect(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		p := rwc.(*process)
		select {
		case <-p.Exited():
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: the agent did not exit", script)
		}
		p.Close()
		exit := p.ExitError()
		if p.stop.link == nil || exit == nil || exit.Err == nil || exit.Err.Error() != want {
			t.Errorf("%s: reaper %v, exit error %v, want %s", script, p.stop.link != nil, exit, want)
		}
		if strings.Contains(script, "bye") && !strings.HasSuffix(exit.Error(), "stderr: bye") {
			t.Errorf("%s: exit error %q, want the agent's stderr tail", script, exit)
		}
	}
}

// lockedBuffer is a log's buffer, written from the agent's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
