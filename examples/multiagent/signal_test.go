package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/acphost/acphost/acptest"
)

// A signal in the middle of the demo agents' turns cancels them and the
// program removes its temporary workspace before it exits: run the real
// program, send SIGINT and SIGTERM once each, and look at TMPDIR.
func TestSignalRemovesTheWorkspace(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "multiagent")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("building: %v\n%s", err, out)
	}
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			tmp := t.TempDir()
			cmd := exec.Command(bin, "-n", "2", "-pace", "200ms", "hi")
			cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// The first line means the workspace exists and a turn runs.
			lines := bufio.NewScanner(stdout)
			if !lines.Scan() {
				cmd.Wait()
				t.Fatalf("no output; stderr:\n%s", stderr.String())
			}
			if left, _ := os.ReadDir(tmp); len(left) != 1 || !strings.HasPrefix(left[0].Name(), "multiagent-") {
				t.Fatalf("the temporary workspace while running: %v", left)
			}
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			for lines.Scan() {
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case err = <-done:
			case <-time.After(20 * time.Second):
				cmd.Process.Kill()
				<-done
				t.Fatal("still running 20s after the signal")
			}
			if err == nil || !strings.Contains(stderr.String(), "interrupted") {
				t.Errorf("exit: %v, stderr:\n%s", err, stderr.String())
			}
			if _, err := os.Stat(fmt.Sprintf("/proc/%d", cmd.Process.Pid)); err == nil {
				t.Errorf("process %d still in the process table", cmd.Process.Pid)
			}
			if left, _ := os.ReadDir(tmp); len(left) != 0 {
				t.Errorf("left in the temporary directory: %v", left)
			}
		})
	}
}

// Two messages of one agent that do not end in a newline are two lines,
// whether their ids tell them apart or a thought comes between.
func TestMessagesNotGlued(t *testing.T) {
	chunk := func(id, text string) acptest.Step {
		return acptest.Step{Update: []byte(fmt.Sprintf(`{"sessionUpdate":"agent_message_chunk","messageId":%q,"content":{"type":"text","text":%q}}`, id, text))}
	}
	script := acptest.WriteScript(t, acptest.Script{Prompts: []acptest.Turn{{Steps: []acptest.Step{
		chunk("m1", "first"), chunk("m1", " message"), chunk("m2", "second message"),
		{Update: []byte(`{"sessionUpdate":"agent_thought_chunk","content":{"type":"text","text":"hmm"}}`)},
		{Text: "third"}, {Text: " message"},
	}}}})
	agent := fmt.Sprintf("'%s' -script '%s'", acptest.BuildBinary(t), script)
	var out bytes.Buffer
	if err := run([]string{"-cwd", t.TempDir(), "-agent", agent, "hi"}, &out); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	for _, want := range []string{"│ first message\n", "│ second message\n", "│ third message\n"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks the line %q:\n%s", want, out.String())
		}
	}
}
