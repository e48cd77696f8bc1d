package acpclient

import (
	"context"
	"io"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// TestStartCombinesOutputInOrder: stdout and stderr arrive in one stream
// in the order written, and Wait gives the exit code.
func TestStartCombinesOutputInOrder(t *testing.T) {
	c, err := Command("/bin/sh", "-c", `echo one; echo two >&2; echo three; exit 3`).Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	out, err := readAllErr(t, c)
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != "one\ntwo\nthree\n" {
		t.Errorf("output %q, want one two three in order", out)
	}
	st := waitStatus(t, c)
	if st.ExitCode == nil || *st.ExitCode != 3 || st.Signal != nil {
		t.Errorf("exit status %+v, want code 3", st)
	}
}

// TestStartKillEndsTheTree: Kill ends the command and a grandchild in its
// group, with a pipe or a pseudo-terminal for output;
// Wait names the signal and the output ends.
func TestStartKillEndsTheTree(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("checks the process table through /proc")
	}
	for _, pty := range []bool{false, true} {
		pidFile := filepath.Join(t.TempDir(), "pids")
		tr := Command("/bin/sh", "-c", `sh -c 'sleep 300 & echo $! > "$0"; wait' "$0" & exec sleep 301`, pidFile)
		tr.PTY = pty
		c, err := tr.Start(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		grandchild, _ := strconv.Atoi(strings.TrimSpace(waitFile(t, pidFile)))
		members := groupMembers(t, c.(*localCommand).pid)
		if len(members) < 3 { // sleep 301, the child sh, sleep 300 (the reaper has a group of its own)
			t.Fatalf("pty %v: group %d has %v, want the command, its child and grandchild %d", pty, c.(*localCommand).pid, members, grandchild)
		}
		if err := c.Kill(); err != nil {
			t.Fatal(err)
		}
		st := waitStatus(t, c)
		if st.Signal == nil || *st.Signal != "SIGKILL" || st.ExitCode != nil {
			t.Errorf("pty %v: exit status %+v, want signal SIGKILL", pty, st)
		}
		if _, err := readAllErr(t, c); err != nil {
			t.Errorf("pty %v: reading after the kill: %v", pty, err)
		}
		for _, pid := range append(members, grandchild) {
			waitGone(t, pid, "member of the command's group")
		}
	}
}

// TestStartExitEndsLeftovers: what a command leaves running in its group
// is ended when it exits, and the output then ends.
func TestStartExitEndsLeftovers(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("checks the process table through /proc")
	}
	c, err := Command("/bin/sh", "-c", `sleep 300 & echo $!`).Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out, err := readAllErr(t, c) // ends only once the sleep, which holds the pipe, is gone
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	child, _ := strconv.Atoi(strings.TrimSpace(string(out)))
	waitGone(t, child, "the command's child")
	if st := waitStatus(t, c); st.ExitCode == nil || *st.ExitCode != 0 {
		t.Errorf("exit status %+v, want 0", st)
	}
}

// TestStartCloseWhileRunning: Close ends a running command and its output.
func TestStartCloseWhileRunning(t *testing.T) {
	c, err := Command("/bin/sleep", "300").Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	pid := c.(*localCommand).pid
	c.Close()
	if n, err := c.Read(make([]byte, 8)); n != 0 || err != io.EOF {
		t.Errorf("Read after Close: %d, %v; want EOF", n, err)
	}
	if runtime.GOOS == "linux" {
		waitGone(t, pid, "the command")
	}
}
