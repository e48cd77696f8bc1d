//go:build unix

package acpclient

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"
)

// helperTTYHost is the value of helperHostEnv that makes the test binary a
// host run from a terminal (a pty is its controlling terminal) which runs
// an interactive shell as a helper command, with OwnSession as
// ACPCLIENT_TEST_OWN_SESSION says, and prints how it went.
const helperTTYHost = "tty"

func runHelperTTYHost() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	shell := "/bin/sh"
	if p, err := exec.LookPath("bash"); err == nil {
		shell = p
	}
	t := &CommandTransport{Path: shell, Args: []string{"-i", "-c", "echo shell-ran"}, Env: []string{"PATH=/usr/bin:/bin", "HOME=/nonexistent"},
		OwnSession: os.Getenv("ACPCLIENT_TEST_OWN_SESSION") == "1"}
	out, err := t.Output(ctx)
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		fmt.Println("RESULT stopped")
	case err != nil:
		fmt.Println("RESULT error", err)
	default:
		fmt.Println("RESULT", strings.TrimSpace(string(out)))
	}
}

// TestOwnSessionKeepsJobControlAway: an app run from a terminal that asks
// an interactive shell for something (the login shell's PATH) sees the
// shell stopped by job control when the shell has only a process group of
// its own; with OwnSession it has no controlling terminal and runs. Both
// are checked, so the test shows the terminal really stops the shell here.
func TestOwnSessionKeepsJobControlAway(t *testing.T) {
	for _, c := range []struct{ own, want string }{{"0", "RESULT stopped"}, {"1", "RESULT shell-ran"}} {
		host := exec.Command(os.Args[0], "-test.run=^$")
		host.Env = append(os.Environ(), helperHostEnv+"="+helperTTYHost, "ACPCLIENT_TEST_OWN_SESSION="+c.own)
		tty, err := pty.Start(host) // a session of its own, the pty its controlling terminal
		if err != nil {
			t.Skipf("no pseudo-terminal: %v", err)
		}
		var got string
		sc := bufio.NewScanner(tty)
		for sc.Scan() {
			if line := strings.TrimSpace(sc.Text()); strings.HasPrefix(line, "RESULT") {
				got = line
				break
			}
		}
		host.Process.Kill()
		host.Wait()
		tty.Close()
		if got != c.want {
			t.Errorf("OwnSession=%s: the helper host said %q, want %q", c.own, got, c.want)
		}
	}
}
