package acpclient

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// groupMembers lists the processes of group pgid in /proc.
func groupMembers(t *testing.T, pgid int) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st := statOf(pid); len(st) > 2 && st[2] == strconv.Itoa(pgid) && st[0] != "Z" {
			pids = append(pids, pid)
		}
	}
	return pids
}

// waitFile waits, bounded, for a file with a line in it.
func waitFile(t *testing.T, path string) string {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if b, err := os.ReadFile(path); err == nil && strings.HasSuffix(string(b), "\n") {
			return strings.TrimSpace(string(b))
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s was not written", path)
		}
	}
}

// TestOutputEndedContextKillsTheGroup: a helper that ignores SIGTERM and
// leaves a child in its group behind is gone, child, sentinel and all,
// once its context ends; the error says why.
func TestOutputEndedContextKillsTheGroup(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("checks the process table through /proc")
	}
	pidFile := filepath.Join(t.TempDir(), "pids")
	cmd := Command("/bin/sh", "-c", `trap "" TERM; sleep 300 & echo $$ $! > "$0"; exec sleep 301`, pidFile)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := cmd.Output(ctx)
		done <- err
	}()
	fields := strings.Fields(waitFile(t, pidFile))
	leader, _ := strconv.Atoi(fields[0])
	// The helper can write its pids before the sentinel has joined its
	// group (the sentinel starts once the helper runs): wait for it.
	members := groupMembers(t, leader)
	for deadline := time.Now().Add(5 * time.Second); len(members) < 3; members = groupMembers(t, leader) {
		if time.Now().After(deadline) { // the helper, its child, the sentinel
			t.Fatalf("group %d has %v, want the helper, its child %s and the sentinel", leader, members, fields[1])
		}
		time.Sleep(5 * time.Millisecond)
	}
	if got := statusField(t, leader, "SigIgn"); got == "0000000000000000" {
		t.Fatalf("the helper does not ignore SIGTERM (SigIgn %s)", got)
	}
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Output: %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Output did not return after its context ended")
	}
	for _, pid := range members {
		waitGone(t, pid, "member of the helper's group")
	}
}

// TestOutputLeavesNothingBehind: a helper that exits normally returns its
// stdout, and what it left running in its group is ended with it.
func TestOutputLeavesNothingBehind(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("checks the process table through /proc")
	}
	out, err := Command("/bin/sh", "-c", `sleep 300 & echo $!; echo hello`).Output(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Fields(string(out))
	if len(lines) != 2 || lines[1] != "hello" {
		t.Fatalf("output %q", out)
	}
	child, _ := strconv.Atoi(lines[0])
	waitGone(t, child, "the helper's child")
}

// TestOutputExitAndLimit: a failing helper is an *ExitError quoting its
// stderr; stdout beyond MaxOutputBytes is dropped and said so; CombinedOutput
// captures both streams.
func TestOutputExitAndLimit(t *testing.T) {
	_, err := Command("/bin/sh", "-c", `echo oops >&2; exit 3`).Output(context.Background())
	var exit *ExitError
	if !errors.As(err, &exit) || exit.Stderr != "oops" {
		t.Errorf("Output of a failing helper: %v", err)
	}
	out, err := Command("/bin/sh", "-c", `head -c 2000000 /dev/zero`).Output(context.Background())
	if !errors.Is(err, ErrOutputTruncated) || len(out) != MaxOutputBytes {
		t.Errorf("Output of a chatty helper: %d bytes, %v", len(out), err)
	}
	out, err = Command("/bin/sh", "-c", `echo a; echo b >&2`).CombinedOutput(context.Background())
	if err != nil || string(out) != "a\nb\n" {
		t.Errorf("CombinedOutput: %q, %v", out, err)
	}
	if _, err := Command("no-such-helper-program").Output(context.Background()); !errors.Is(err, ErrAgentNotFound) {
		t.Errorf("Output of a missing program: %v", err)
	}
}
