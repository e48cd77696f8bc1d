package acpclient

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acphost/acphost/acptest"
	"github.com/acphost/acphost/internal/sshdtest"
	"github.com/acphost/acphost/internal/sshtest"
	"github.com/acphost/acphost/internal/waitfor"
)

// TestSSHArgumentsAreNotInterpreted runs a remote command whose arguments
// are full of shell syntax, as an agent (Connect) and as a terminal
// (Start); they must arrive byte for byte, and so must the environment.
func TestSSHArgumentsAreNotInterpreted(t *testing.T) {
	srv := sshtest.Start(t, nil)
	client := srv.Dial(t)
	args := []string{"with space", `"double"`, "'single'", "$HOME", "a;b", "line1\nline2", "`id`", "*", "back\\slash", ""}
	for _, start := range []struct {
		name string
		run  func(*SSHTransport) (io.ReadCloser, error)
	}{
		{"connect", func(tr *SSHTransport) (io.ReadCloser, error) { return tr.Connect(waitfor.Context(t)) }},
		{"start", func(tr *SSHTransport) (io.ReadCloser, error) { return tr.Start(waitfor.Context(t)) }},
	} {
		t.Run(start.name, func(t *testing.T) {
			tr := &SSHTransport{Client: client, Path: "sh", Dir: t.TempDir(),
				Args: append([]string{"-c", `for a; do printf '%s\0' "$a"; done; printf 'ENV=%s\0' "$ACP_TEST_VALUE"`, "argv0"}, args...),
				Env:  []string{"ACP_TEST_VALUE=x $y 'z'\nnext line"}}
			rc, err := start.run(tr)
			if err != nil {
				t.Fatal(err)
			}
			defer rc.Close()
			var out []byte
			waitfor.Call(t, "the end of the remote command's output", func() { out, err = io.ReadAll(rc) })
			if err != nil {
				t.Fatal(err)
			}
			got := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
			want := append(append([]string(nil), args...), "ENV=x $y 'z'\nnext line")
			if strings.Join(got, "|") != strings.Join(want, "|") {
				t.Fatalf("remote argv:\n got %q\nwant %q", got, want)
			}
		})
	}
}

func TestSSHMissingAgentIsReported(t *testing.T) {
	srv := sshtest.Start(t, nil)
	tr := &SSHTransport{Client: srv.Dial(t), Path: "no-such-agent-on-this-host"}
	c, err := Connect(waitfor.Context(t), tr, newRecorder(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, err = c.Initialize(waitfor.Context(t), nil)
	if !errors.Is(err, ErrAgentNotFound) || !strings.Contains(err.Error(), "no-such-agent-on-this-host") {
		t.Fatalf("Initialize on a missing remote agent: %v", err)
	}
}

// TestSSHTurnAndCleanupOnDroppedConnection runs the fake agent through SSH,
// then drops the connection mid-turn: the Conn reports the loss and the
// remote side kills the agent (checked in the process table).
func TestSSHTurnAndCleanupOnDroppedConnection(t *testing.T) {
	srv := sshtest.Start(t, nil)
	bin := acptest.BuildBinary(t)
	marker := filepath.Join(t.TempDir(), "marker-record")
	script := acptest.WriteScript(t, acptest.Script{StayAfterEOF: true, Prompts: []acptest.Turn{
		{Match: "hello", Steps: []acptest.Step{{Text: "hi over ssh"}}},
		{Match: "hang", IgnoreCancel: true, Steps: []acptest.Step{{Hang: true}}},
	}})
	tr := &SSHTransport{Client: srv.Dial(t), Path: bin, Args: []string{"-script", script, "-record", marker},
		StopTimeout: time.Second, KillTimeout: time.Second}
	rec := newRecorder()
	c, err := Connect(waitfor.Context(t), tr, rec, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := waitfor.Context(t)
	if _, err := c.Initialize(ctx, nil); err != nil {
		t.Fatal(err)
	}
	s, err := c.NewSession(ctx, &NewSessionRequest{Cwd: "/"})
	if err != nil {
		t.Fatal(err)
	}
	if resp, err := c.Prompt(ctx, &PromptRequest{SessionID: s.SessionID, Prompt: []ContentBlock{TextBlock("hello")}}); err != nil || resp.StopReason != StopEndTurn {
		t.Fatalf("prompt over ssh: %v %v", resp, err)
	}
	if got := textOf(t, rec.snapshot()[0]); got != "hi over ssh" {
		t.Fatalf("text %q", got)
	}
	if !processWithArg(marker) {
		t.Fatal("remote agent not found in the process table")
	}
	errc := make(chan error, 1)
	go func() {
		_, err := c.Prompt(ctx, &PromptRequest{SessionID: s.SessionID, Prompt: []ContentBlock{TextBlock("hang")}})
		errc <- err
	}()
	time.Sleep(100 * time.Millisecond)
	srv.DropConnections()
	err = waitfor.Recv(t, errc, "the prompt to fail on the dropped connection")
	var exit *ExitError
	if !errors.As(err, &exit) || !strings.Contains(err.Error(), "lost") {
		t.Fatalf("prompt on a dropped connection: %v", err)
	}
	for deadline := time.Now().Add(10 * time.Second); processWithArg(marker); {
		if time.Now().After(deadline) {
			out, _ := exec.Command("ps", "-eo", "pid,ppid,pgid,stat,args").Output()
			t.Fatalf("remote agent still running after the connection dropped:\n%s", out)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// processWithArg reports whether a live process has arg on its command line.
func processWithArg(arg string) bool {
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		cmdline, err := os.ReadFile(filepath.Join(d, "cmdline"))
		if err != nil || !strings.Contains(string(cmdline), arg) {
			continue
		}
		stat, _ := os.ReadFile(filepath.Join(d, "stat"))
		if !strings.Contains(string(stat), ") Z ") {
			return true
		}
	}
	return false
}

// TestSSHCloseEndsRemoteTree: an agent that ignores both stdin closing and
// SIGTERM is still gone after Close.
func TestSSHCloseEndsRemoteTree(t *testing.T) {
	srv := sshtest.Start(t, nil)
	bin := acptest.BuildBinary(t)
	marker := filepath.Join(t.TempDir(), "stubborn")
	script := acptest.WriteScript(t, acptest.Script{StayAfterEOF: true, IgnoreSIGTERM: true})
	tr := &SSHTransport{Client: srv.Dial(t), Path: bin, Args: []string{"-script", script, "-record", marker},
		StopTimeout: time.Second, KillTimeout: time.Second}
	c, err := Connect(waitfor.Context(t), tr, newRecorder(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Initialize(waitfor.Context(t), nil); err != nil {
		t.Fatal(err)
	}
	c.Close()
	waitfor.Closed(t, c.Done(), "the connection to end after Close")
	for deadline := time.Now().Add(10 * time.Second); processWithArg(marker); {
		if time.Now().After(deadline) {
			t.Fatal("stubborn remote agent survived Close")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestSSHRealSSHD runs a turn through a real OpenSSH server, then cuts the
// connection and checks the agent does not outlive it.
func TestSSHRealSSHD(t *testing.T) {
	srv := sshdtest.Start(t) // skips when sshd is not installed
	client := srv.Dial(t)
	bin := acptest.BuildBinary(t)
	marker := filepath.Join(t.TempDir(), "real-sshd")
	script := acptest.WriteScript(t, acptest.Script{StayAfterEOF: true, Prompts: []acptest.Turn{
		{Match: "hello", Steps: []acptest.Step{{Text: "hi from sshd"}}},
		{Match: "hang", Steps: []acptest.Step{{Hang: true}}},
	}})
	tr := &SSHTransport{Client: client, Path: bin, Args: []string{"-script", script, "-record", marker},
		Env: []string{"ACPHOST_TEST=1"}, StopTimeout: time.Second, KillTimeout: time.Second}
	rec := newRecorder()
	c, err := Connect(waitfor.Context(t), tr, rec, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := waitfor.Context(t)
	if _, err := c.Initialize(ctx, nil); err != nil {
		t.Fatal(err)
	}
	s, err := c.NewSession(ctx, &NewSessionRequest{Cwd: "/"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Prompt(ctx, &PromptRequest{SessionID: s.SessionID, Prompt: []ContentBlock{TextBlock("hello")}}); err != nil {
		t.Fatal(err)
	}
	if got := textOf(t, rec.snapshot()[0]); got != "hi from sshd" {
		t.Fatalf("text %q", got)
	}
	go c.Prompt(ctx, &PromptRequest{SessionID: s.SessionID, Prompt: []ContentBlock{TextBlock("hang")}})
	time.Sleep(100 * time.Millisecond)
	client.Close() // the connection drops mid-turn
	waitfor.Closed(t, c.Done(), "the connection to end after the SSH connection dropped")
	for deadline := time.Now().Add(15 * time.Second); processWithArg(marker); {
		if time.Now().After(deadline) {
			out, _ := exec.Command("ps", "-eo", "pid,ppid,pgid,stat,args").Output()
			t.Fatalf("agent outlived its SSH connection:\n%s", out)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
