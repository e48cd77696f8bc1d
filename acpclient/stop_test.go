package acpclient

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// termAgent is a shell agent that writes its pid to pidFile, runs body and
// then keeps running, ignoring stdin, until SIGTERM, which it answers by
// writing marker and exiting.
func termAgent(dir, body string) (tr *CommandTransport, pidFile, marker string) {
	pidFile, marker = filepath.Join(dir, "agent.pid"), filepath.Join(dir, "got-sigterm")
	script := `echo $$ > ` + pidFile + `; trap 'echo term > ` + marker + `; exit 0' TERM; ` + body +
		`; while :; do sleep 0.02; done`
	return &CommandTransport{Path: "/bin/sh", Args: []string{"-c", script},
		StopTimeout: 100 * time.Millisecond, KillTimeout: 10 * time.Second}, pidFile, marker
}

// waitPid reads the pid an agent wrote.
func waitPid(t *testing.T, path string) int {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		b, _ := os.ReadFile(path)
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && pid > 0 {
			return pid
		}
	}
	t.Fatalf("no pid in %s", path)
	return 0
}

// assertStopped checks, at once, that the agent is gone from the process
// table and that it was sent the SIGTERM it obeys.
func assertStopped(t *testing.T, pid int, marker string) {
	t.Helper()
	if alive(pid) {
		t.Errorf("agent %d still running", pid)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Errorf("the agent never got SIGTERM: %v", err)
	}
}

func waitDone(t *testing.T, c *Conn) {
	t.Helper()
	select {
	case <-c.Done():
	case <-time.After(15 * time.Second):
		t.Fatal("Done never closed")
	}
}

// TestDoneAndCloseMeanTheProcessIsGone: whichever way a connection to an
// agent that closes its stdout and stays alive ends, Done and Close come
// only after the whole stop sequence, so an agent that obeys SIGTERM gets
// it and exits.
func TestDoneAndCloseMeanTheProcessIsGone(t *testing.T) {
	opts := &ConnOptions{ExitWait: 100 * time.Millisecond}
	t.Run("stdout closed, nobody calls Close", func(t *testing.T) {
		tr, pidFile, marker := termAgent(t.TempDir(), `exec >&-`)
		c, err := Connect(context.Background(), tr, newRecorder(), opts)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		pid := waitPid(t, pidFile)
		waitDone(t, c)
		assertStopped(t, pid, marker)
	})
	t.Run("stdout closed, then Close", func(t *testing.T) {
		tr, pidFile, marker := termAgent(t.TempDir(), `exec >&-`)
		c, err := Connect(context.Background(), tr, newRecorder(), opts)
		if err != nil {
			t.Fatal(err)
		}
		pid := waitPid(t, pidFile)
		for deadline := time.Now().Add(5 * time.Second); c.Err() == nil; time.Sleep(2 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("the end of stdout did not end the connection")
			}
		}
		c.Close()
		assertStopped(t, pid, marker)
		waitDone(t, c)
	})
	t.Run("Close first", func(t *testing.T) {
		tr, pidFile, marker := termAgent(t.TempDir(), `:`)
		c, err := Connect(context.Background(), tr, newRecorder(), opts)
		if err != nil {
			t.Fatal(err)
		}
		pid := waitPid(t, pidFile)
		c.Close()
		assertStopped(t, pid, marker)
		waitDone(t, c)
	})
	t.Run("line over the cap", func(t *testing.T) {
		tr, pidFile, marker := termAgent(t.TempDir(), `head -c 4000 /dev/zero | tr '\0' x; echo`)
		c, err := Connect(context.Background(), tr, newRecorder(), &ConnOptions{ExitWait: 100 * time.Millisecond, MaxLineBytes: 1024})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		pid := waitPid(t, pidFile)
		waitDone(t, c)
		if !errors.Is(c.Err(), ErrLineTooLong) {
			t.Errorf("Err = %v, want ErrLineTooLong", c.Err())
		}
		assertStopped(t, pid, marker)
	})
}
