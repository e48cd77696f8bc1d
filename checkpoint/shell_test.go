package checkpoint

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/acphost/acphost/internal/sshdtest"
)

// TestShellOverSSHD runs commands through one remote sh over a real sshd:
// output, input and errors pass byte for byte as a session per command
// passes them; the sh stays from command to command, and a new one starts
// after a cancelled command or a new connection; a command that comes
// while another runs gets a session of its own; Close ends the sh.
func TestShellOverSSHD(t *testing.T) {
	srv := sshdtest.Start(t)
	// What a user's startup file prints is not a command's output.
	srv.SetStartup(t, "echo said-at-startup")
	var current atomic.Pointer[ssh.Client]
	current.Store(srv.Dial(t))
	sh := &Shell{}
	t.Cleanup(sh.Close)
	r := SSH{Dial: func(context.Context) (*ssh.Client, error) { return current.Load(), nil }, Shell: sh}
	ctx := testCtx(t)
	run := func(args []string, env []string, stdin []byte) ([]byte, error) {
		t.Helper()
		return r.Run(ctx, args, env, stdin)
	}
	// parent is the pid of the sh that ran a command.
	parent := func() string {
		t.Helper()
		out, err := run([]string{"sh", "-c", `echo "$PPID"`}, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(out))
	}

	// Nor in a session per command.
	if out, err := (SSH{Dial: r.Dial}).Run(ctx, []string{"printf", "only"}, nil, nil); err != nil || string(out) != "only" {
		t.Errorf("a session per command = %q, %v; want only its output", out, err)
	}
	// Output with NULs, and what looks like the start of the mark.
	want := "a\x00\x00b\x00\x00\x00\x00"
	if out, err := run([]string{"printf", `a\000\000b\000\000\000\000`}, nil, nil); err != nil || string(out) != want {
		t.Errorf("printf = %q, %v; want %q", out, err, want)
	}
	// Input of every byte value.
	var all []byte
	for i := range 3 * 256 {
		all = append(all, byte(i))
	}
	if out, err := run([]string{"cat"}, nil, all); err != nil || !bytes.Equal(out, all) {
		t.Errorf("cat of every byte = %d bytes, %v; want them back", len(out), err)
	}
	if out, err := run([]string{"sh", "-c", `printf %s "$X"`}, []string{"X=it's 100% set"}, nil); err != nil || string(out) != "it's 100% set" {
		t.Errorf("env = %q, %v", out, err)
	}
	if out, err := run([]string{"env"}, []string{"X=x", "NOT-A-NAME=1"}, nil); err != nil || !strings.Contains(string(out), "\nNOT-A-NAME=1\n") || !strings.Contains(string(out), "\nX=x\n") {
		t.Errorf("env with a name sh cannot export = %q, %v", out, err)
	}
	// A script of sh -c, with its arguments and a case (parentheses in a
	// command substitution).
	script := `case $1 in /*) printf 'abs %s %s' "$1" "$#" ;; *) exit 4 ;; esac`
	if out, err := run([]string{"sh", "-c", script, "sh", "/x y", "two"}, nil, nil); err != nil || string(out) != "abs /x y 2" {
		t.Errorf("sh -c = %q, %v", out, err)
	}
	if _, err := run([]string{"sh", "-c", script, "sh", "rel"}, nil, nil); err == nil || !strings.Contains(err.Error(), "exit status 4") {
		t.Errorf("sh -c exiting 4 = %v", err)
	}
	out, err := run([]string{"sh", "-c", "printf partial; echo went wrong >&2; exit 3"}, nil, nil)
	if err == nil || string(out) != "partial" || !strings.Contains(err.Error(), "exit status 3: went wrong") {
		t.Errorf("a failing command = %q, %v; want its output and an error with its status and stderr", out, err)
	}
	if _, err := run([]string{"no-such-program-acphost"}, nil, nil); !errors.Is(err, exec.ErrNotFound) {
		t.Errorf("a missing program = %v, want exec.ErrNotFound", err)
	}
	first := parent()
	if again := parent(); again != first {
		t.Fatalf("commands ran in sh %s, then %s: want one sh", first, again)
	}

	// A command that comes while another runs: a session of its own. Then
	// the running one is cancelled: the next command gets a new sh.
	pidFile := filepath.Join(tempDir(t), "pid")
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		_, err := r.Run(cctx, []string{"sh", "-c", `echo $$ > "$1.tmp" && mv "$1.tmp" "$1" && exec sleep 60`, "sh", pidFile}, nil, nil)
		done <- err
	}()
	sleeper := waitPid(t, pidFile)
	t.Cleanup(func() { _ = syscall.Kill(sleeper, syscall.SIGKILL) })
	if out, err := r.Run(ctx, []string{"sh", "-c", `echo "$PPID"`}, nil, nil); err != nil || strings.TrimSpace(string(out)) == first {
		t.Errorf("a command beside a running one = %q, %v; want a session of its own", out, err)
	}
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("the cancelled command = %v, want context.Canceled", err)
		}
	case <-ctx.Done():
		t.Fatal("the cancelled command did not return")
	}
	second := parent()
	if second == first {
		t.Errorf("after a cancelled command, the same sh %s", first)
	}

	// A new connection: a new sh, and the old one ends.
	current.Store(srv.Dial(t))
	if third := parent(); third == second {
		t.Errorf("on a new connection, the same sh %s", second)
	}
	waitGone(t, second)

	// Close ends the sh; commands still run, a session each.
	last := parent()
	sh.Close()
	waitGone(t, last)
	if out, err := run([]string{"echo", "after"}, nil, nil); err != nil || string(out) != "after\n" {
		t.Errorf("after Close = %q, %v", out, err)
	}
}

// waitPid waits for a pid file and returns its pid.
func waitPid(t *testing.T, path string) int {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(path); err == nil {
			pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err != nil {
				t.Fatalf("pid file %s: %v", path, err)
			}
			return pid
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no pid in %s after a minute", path)
	return 0
}

// waitGone waits until the process pid has ended.
func waitGone(t *testing.T, pid string) {
	t.Helper()
	n, err := strconv.Atoi(pid)
	if err != nil {
		t.Fatalf("pid %q: %v", pid, err)
	}
	deadline := time.Now().Add(time.Minute)
	for syscall.Kill(n, 0) == nil {
		if time.Now().After(deadline) {
			t.Fatalf("sh %d still runs after a minute", n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
