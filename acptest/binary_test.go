package acptest_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/acphost/acphost/acptest"
)

// process is a running fakeagent.
type process struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr *syncBuffer
	waited chan struct{}
	err    error // Wait's result, once waited is closed
}

// wait waits for the process to exit, at most 10s.
func (p *process) wait(t *testing.T) error {
	t.Helper()
	select {
	case <-p.waited:
		return p.err
	case <-time.After(10 * time.Second):
		t.Fatal("fakeagent still running after 10s")
		return nil
	}
}

// runBinary starts the fakeagent binary for script and connects a client.
func runBinary(t *testing.T, script acptest.Script, record string) (*client, *process) {
	t.Helper()
	cmd := exec.Command(acptest.BuildBinary(t), "-script", acptest.WriteScript(t, script), "-record", record)
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &process{cmd: cmd, stdin: stdin, stderr: stderr, waited: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.waited)
	}()
	t.Cleanup(func() {
		stdin.Close()
		cmd.Process.Kill()
		<-p.waited
	})
	return newClient(t, stdout, stdin, nil), p
}

func TestBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a binary")
	}
	record := filepath.Join(t.TempDir(), "record.jsonl")
	c, p := runBinary(t, acptest.Script{
		NewSession: acptest.NewSessionScript{Steps: []acptest.Step{{Stderr: "creating session"}}},
		Prompts: []acptest.Turn{
			{Match: "bye", Steps: []acptest.Step{{Text: "exiting"}, {Exit: intPtr(3)}}},
			{Steps: []acptest.Step{{Permission: &acptest.Permission{}}}},
		},
	}, record)
	c.initialize()
	s := c.newSession()
	id := c.prompt(s, "hi")
	c.reply(c.request("session/request_permission").ID, `{"outcome":{"outcome":"selected","optionId":"allow"}}`)
	if reason, texts := c.stopReason(id); reason != "end_turn" || !slices.Equal(texts, []string{"permission: selected allow"}) {
		t.Errorf("turn: %s %q", reason, texts)
	}
	c.prompt(s, "bye")
	if text, _ := chunkText(c.next()); text != "exiting" {
		t.Errorf("before exit: %q", text)
	}
	var exitErr *exec.ExitError
	if err := p.wait(t); !errors.As(err, &exitErr) || exitErr.ExitCode() != 3 {
		t.Errorf("exit = %v, want code 3", err)
	}
	if !strings.Contains(p.stderr.String(), "creating session\n") {
		t.Errorf("stderr = %q", p.stderr.String())
	}
	msgs, err := acptest.ReadRecord(record)
	if err != nil {
		t.Fatal(err)
	}
	var methods []string
	for _, m := range msgs {
		methods = append(methods, m.Method)
	}
	// The permission answer is a response: no method.
	want := []string{"initialize", "session/new", "session/prompt", "", "session/prompt"}
	if !slices.Equal(methods, want) {
		t.Errorf("recorded %q, want %q", methods, want)
	}
}

func TestBinaryStdinClose(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a binary")
	}
	c, p := runBinary(t, acptest.Script{}, filepath.Join(t.TempDir(), "record.jsonl"))
	c.initialize()
	p.stdin.Close()
	if err := p.wait(t); err != nil {
		t.Errorf("exit after stdin close = %v", err)
	}
}

func TestBinaryUsage(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a binary")
	}
	var stderr bytes.Buffer
	cmd := exec.Command(acptest.BuildBinary(t))
	cmd.Env = []string{}
	cmd.Stderr = &stderr
	var exitErr *exec.ExitError
	if err := cmd.Run(); !errors.As(err, &exitErr) || exitErr.ExitCode() != 2 || !strings.Contains(stderr.String(), "-script") {
		t.Errorf("no script: %v %q", err, stderr.String())
	}
}

func TestBinaryStubborn(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a binary")
	}
	c, p := runBinary(t, acptest.Script{StayAfterEOF: true, IgnoreSIGTERM: true}, filepath.Join(t.TempDir(), "record.jsonl"))
	c.initialize() // the agent is serving, so SIGTERM is ignored by now
	p.stdin.Close()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.waited:
		t.Fatalf("fakeagent exited on stdin close + SIGTERM: %v\n%s", p.err, p.stderr.String())
	case <-time.After(50 * time.Millisecond):
	}
	p.cmd.Process.Kill()
	if err := p.wait(t); err == nil {
		t.Errorf("killed fakeagent exited cleanly")
	}
}

func TestBinaryInterrupt(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a binary")
	}
	c, p := runBinary(t, acptest.Script{}, filepath.Join(t.TempDir(), "record.jsonl"))
	c.initialize() // serving, so SIGINT is watched by now
	if err := p.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	var exitErr *exec.ExitError
	if err := p.wait(t); !errors.As(err, &exitErr) || exitErr.ExitCode() != 130 {
		t.Errorf("exit after SIGINT = %v, want code 130", err)
	}
}
