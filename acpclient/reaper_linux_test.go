//go:build linux

package acpclient

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// TestStartEndsOrphanedDaemons: a daemon a command started, which left its
// group and session and whose parent is gone, is ended with the command:
// when the command has already exited, when it is killed, when it is
// closed; with a pipe or a pseudo-terminal. Nothing is sampled: the
// command's reaper holds the daemon however fast it got away.
func TestStartEndsOrphanedDaemons(t *testing.T) {
	cases := []struct {
		name, script string
		end          func(RunningCommand)
	}{
		{"exited at once", orphanDaemon, func(c RunningCommand) { c.Wait() }},
		{"killed", orphanDaemon + "; exec sleep 300", func(c RunningCommand) { c.Kill(); c.Wait() }},
		{"closed", orphanDaemon + "; exec sleep 300", func(c RunningCommand) { c.Close() }},
	}
	for _, tc := range cases {
		for _, pty := range []bool{false, true} {
			tr := Command("/bin/sh", "-c", tc.script)
			tr.PTY = pty
			c, err := tr.Start(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if why := c.Uncontained(); why != "" {
				t.Errorf("%s, pty %v: uncontained on Linux: %s", tc.name, pty, why)
			}
			daemon := readPid(t, c)
			t.Cleanup(func() { _ = killPid(daemon) }) // should it survive
			tc.end(c)
			waitGone(t, daemon, tc.name+": the daemon of a command")
			c.Close()
		}
	}
}

// TestStartWithoutReaperSaysSo: a command run without its reaper (as where
// there is none) says why its processes cannot all be accounted for.
func TestStartWithoutReaperSaysSo(t *testing.T) {
	tr := Command("/bin/true")
	tr.noReaper = true
	c, err := tr.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if why := c.Uncontained(); !strings.Contains(why, "survives") {
		t.Errorf("Uncontained() = %q, want why a daemon may survive", why)
	}
}

// TestStartUnderReaperKeepsTheStatus: the command's own exit code and
// signal come through its reaper, and a program that cannot be executed
// fails Start, as without one.
func TestStartUnderReaperKeepsTheStatus(t *testing.T) {
	c, err := Command("/bin/sh", "-c", `kill -TERM $$`).Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st := c.Wait(); st.Signal == nil || *st.Signal != "SIGTERM" {
		t.Errorf("status %+v, want SIGTERM", st)
	}
	c.Close()
	plain := filepath.Join(t.TempDir(), "not-executable")
	if err := os.WriteFile(plain, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Command(plain).Start(context.Background()); !errors.Is(err, syscall.EACCES) {
		t.Errorf("starting a file that is not executable: %v, want EACCES", err)
	}
}

// readPid reads the first line of a command's output as a pid.
func readPid(t *testing.T, r io.Reader) int {
	t.Helper()
	line, err := bufio.NewReader(r).ReadString('\n')
	pid, perr := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || perr != nil || pid <= 0 {
		t.Fatalf("command printed %q (%v), want a pid", line, err)
	}
	return pid
}

// TestStartFallsBackWithoutReaper: where this program cannot be run again
// as the reaper, the command still runs, without one, and says so.
func TestStartFallsBackWithoutReaper(t *testing.T) {
	tr := Command("/bin/sh", "-c", "echo ran")
	tr.reaperPath = "/nonexistent/acphost-reaper" // as a mount without exec would refuse it
	c, err := tr.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	out, _ := io.ReadAll(c)
	if string(out) != "ran\n" {
		t.Errorf("output %q, want ran", out)
	}
	if why := c.Uncontained(); !strings.Contains(why, "could not be started") {
		t.Errorf("Uncontained() = %q, want that the reaper could not be started", why)
	}
}
