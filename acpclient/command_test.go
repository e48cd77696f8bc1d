package acpclient

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/acphost/acphost/internal/waitfor"
)

func TestCommandMissingBinaryNamesWhatWasLookedFor(t *testing.T) {
	tr := &CommandTransport{Path: "no-such-agent-xyz", Env: []string{"PATH=/nonexistent/bin"}}
	_, err := tr.Connect(context.Background())
	if !errors.Is(err, ErrAgentNotFound) || !strings.Contains(err.Error(), "no-such-agent-xyz") || !strings.Contains(err.Error(), "/nonexistent/bin") {
		t.Fatalf("error %v: want ErrAgentNotFound naming the program and the PATH searched", err)
	}
	_, err = Command("/nonexistent/agent").Connect(context.Background())
	if !errors.Is(err, ErrAgentNotFound) || !strings.Contains(err.Error(), "/nonexistent/agent") {
		t.Fatalf("error %v", err)
	}
}

func TestCommandResolvesFromTheAgentsPATH(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "myagent")
	os.WriteFile(script, []byte("#!/bin/sh\nexec cat\n"), 0o755)
	tr := &CommandTransport{Path: "myagent", Env: []string{"PATH=" + dir + ":/usr/bin:/bin"}}
	p, err := tr.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	p.Write([]byte("echo\n"))
	buf := make([]byte, 5)
	if _, err := p.Read(buf); err != nil || string(buf) != "echo\n" {
		t.Fatalf("read %q, %v", buf, err)
	}
}

// A relative program path means the file relative to this process, the
// one that was checked, never a file of that name in the agent's workspace
// (Dir), which os/exec would otherwise run.
func TestRelativeProgramIsNotTakenFromTheWorkspace(t *testing.T) {
	here, workspace := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(here, "agent.sh"), []byte("#!/bin/sh\necho ours\n"), 0o755)
	os.WriteFile(filepath.Join(workspace, "agent.sh"), []byte("#!/bin/sh\necho workspace\n"), 0o755)
	os.WriteFile(filepath.Join(workspace, "only-there.sh"), []byte("#!/bin/sh\necho workspace\n"), 0o755)
	t.Chdir(here)
	for _, path := range []string{"./agent.sh", "agent.sh"} {
		tr := &CommandTransport{Path: path, Dir: workspace, Env: []string{"PATH=.:/usr/bin:/bin"}}
		p, err := tr.Connect(context.Background())
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out, _ := io.ReadAll(p)
		p.Close()
		if string(out) != "ours\n" {
			t.Errorf("%s ran the workspace's program: %q", path, out)
		}
	}
	if _, err := (&CommandTransport{Path: "./only-there.sh", Dir: workspace}).Connect(context.Background()); !errors.Is(err, ErrAgentNotFound) {
		t.Errorf("a program only in the workspace: %v, want ErrAgentNotFound", err)
	}
	if _, err := Command(here).Connect(context.Background()); !errors.Is(err, ErrAgentNotFound) || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("a directory as the program: %v", err)
	}
}

// TestAgentExitQuotesStderr: a dead agent is reported with the tail of its
// stderr, redacted, and a call on it fails with that, not a broken pipe.
func TestAgentExitQuotesStderr(t *testing.T) {
	tr := &CommandTransport{Path: "/bin/sh", Args: []string{"-c",
		`read line; echo "loading config" >&2; echo "fatal: bad api_key=sk-abcdefghijklmnop" >&2; exit 3`},
		Env: []string{"PATH=/usr/bin:/bin", "OPENAI_API_KEY=supersecretvalue"}}
	c, err := Connect(context.Background(), tr, newRecorder(), &ConnOptions{ExitWait: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, err = c.Initialize(waitfor.Context(t), nil)
	var exit *ExitError
	if !errors.As(err, &exit) || !errors.Is(err, ErrClosed) {
		t.Fatalf("Initialize error = %v, want an ExitError", err)
	}
	if !strings.Contains(exit.Stderr, "fatal: bad") || !strings.Contains(exit.Error(), "exit status 3") {
		t.Errorf("exit error %q lacks the stderr tail or status", exit.Error())
	}
	if strings.Contains(exit.Stderr, "sk-abcdefghijklmnop") {
		t.Errorf("stderr quote leaks a secret: %q", exit.Stderr)
	}
	waitfor.Closed(t, c.Done(), "the connection to end")
	// Writing to the dead agent reports the death, not the pipe.
	_, err = c.NewSession(waitfor.Context(t), &NewSessionRequest{Cwd: "/"})
	if err == nil || strings.Contains(err.Error(), "broken pipe") {
		t.Fatalf("call on dead agent: %v", err)
	}
}

func TestRedactorMasksSecrets(t *testing.T) {
	r := &Redactor{Values: []string{"hunter2hunter2"}}
	in := `token=abc123456 Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.x password: "p4ssw0rd!" key sk-proj-ABCDEFGHIJKL user hunter2hunter2 ok`
	out := r.Redact(in)
	for _, secret := range []string{"abc123456", "eyJhbGciOiJIUzI1NiJ9", "p4ssw0rd!", "sk-proj-ABCDEFGHIJKL", "hunter2hunter2"} {
		if strings.Contains(out, secret) {
			t.Errorf("redacted text still holds %q: %s", secret, out)
		}
	}
	if !strings.Contains(out, "user") || !strings.Contains(out, "ok") {
		t.Errorf("redaction removed ordinary text: %s", out)
	}
}

func TestStderrRingKeepsTheEnd(t *testing.T) {
	r := newRing(16)
	if r.buf != nil {
		t.Fatalf("a new ring holds a %d-byte buffer: it should grow with what is written", cap(r.buf))
	}
	r.Write([]byte("abc"))
	r.Write([]byte("de"))
	if got := r.String(); got != "abcde" {
		t.Fatalf("ring = %q", got)
	}
	r.Write([]byte("fghijklmnop"))
	if got := r.String(); got != "abcdefghijklmnop" {
		t.Fatalf("ring at its size = %q", got)
	}
	r.Write([]byte("q"))
	if got := r.String(); got != "bcdefghijklmnopq" {
		t.Fatalf("ring = %q", got)
	}
	r = newRing(16)
	r.Write([]byte("0123456789"))
	r.Write([]byte("abcdefghij"))
	if got := r.String(); got != "456789abcdefghij" {
		t.Fatalf("ring = %q", got)
	}
	r.Write([]byte(strings.Repeat("z", 40) + "END"))
	if got := r.String(); got != strings.Repeat("z", 13)+"END" {
		t.Fatalf("ring = %q", got)
	}
}

// TestCloseEndsTheProcessTree starts an agent that ignores stdin closing and
// SIGTERM and has a child; Close must leave neither behind.
func TestCloseEndsTheProcessTree(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "child.pid")
	tr := &CommandTransport{Path: "/bin/sh", Args: []string{"-c",
		`trap "" TERM; sleep 300 & echo $! > ` + pidFile + `; while :; do sleep 1; done`},
		StopTimeout: 50 * time.Millisecond, KillTimeout: 50 * time.Millisecond}
	rwc, err := tr.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	p := rwc.(*process)
	var childPid int
	deadline := time.Now().Add(5 * time.Second)
	for childPid == 0 && time.Now().Before(deadline) {
		b, _ := os.ReadFile(pidFile)
		childPid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		time.Sleep(10 * time.Millisecond)
	}
	if childPid == 0 {
		t.Fatal("child did not start")
	}
	start := time.Now()
	p.Close()
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("Close took %v", d)
	}
	select {
	case <-p.Exited():
	default:
		t.Fatal("agent still running after Close")
	}
	// SIGKILL is delivered asynchronously; give the kernel a moment.
	for deadline := time.Now().Add(3 * time.Second); alive(childPid); {
		if time.Now().After(deadline) {
			t.Fatalf("child %d survived Close", childPid)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestAgentExitKillsLeftoverChildren: when the agent exits on its own, a
// child it left in its group is ended too, so the stream reaches EOF.
func TestAgentExitKillsLeftoverChildren(t *testing.T) {
	tr := &CommandTransport{Path: "/bin/sh", Args: []string{"-c", `sleep 300 & exit 0`}}
	c, err := Connect(context.Background(), tr, newRecorder(), nil)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-c.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("stream did not end after the agent exited (a child holds stdout)")
	}
	c.Close()
}

func alive(pid int) bool {
	// Reap nothing: the child is not ours. Signal 0 tests existence; a
	// zombie awaiting its (dead) parent's reaper counts as gone.
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	return err == nil && !strings.Contains(string(b), ") Z ")
}

// TestChattyStderrNeverBlocks: an agent that writes far more to stderr than
// a pipe holds keeps running; only the end of it is kept.
func TestChattyStderrNeverBlocks(t *testing.T) {
	tr := &CommandTransport{Path: "/bin/sh", Args: []string{"-c",
		`head -c 8000000 /dev/zero | tr '\0' 'x' >&2; echo "last words" >&2; exit 7`}, StderrBytes: 1 << 10}
	rwc, err := tr.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	p := rwc.(*process)
	select {
	case <-p.Exited():
	case <-time.After(20 * time.Second):
		t.Fatal("agent blocked writing its stderr")
	}
	p.Close()
	exit := p.ExitError()
	if len(p.Stderr()) > 1<<10 || !strings.HasSuffix(strings.TrimSpace(p.Stderr()), "last words") || !strings.Contains(exit.Error(), "exit status 7") {
		t.Fatalf("kept %d bytes of stderr ending %q; exit %v", len(p.Stderr()), tail(p.Stderr(), 20), exit)
	}
}

func killPid(pid int) error { return syscall.Kill(pid, syscall.SIGKILL) }
