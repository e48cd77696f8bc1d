package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acphost/acphost/journal"
)

// TestAgentFlags checks how the flags become the agent list: the demo by
// default, profiles by name, commands split without a shell, names unique.
func TestAgentFlags(t *testing.T) {
	names := func(args ...string) ([]string, error) {
		o, err := parseArgs(args, io.Discard)
		if err != nil {
			return nil, err
		}
		specs, err := agentSpecs(o)
		var out []string
		for _, s := range specs {
			out = append(out, s.Name+"="+strings.Join(s.Argv, "|"))
		}
		return out, err
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "demo="},
		{[]string{"--agent", "gemini --acp", "--agent", "'/opt/my agent/gemini' --x 'a b'"}, "gemini=gemini|--acp gemini-2=/opt/my agent/gemini|--x|a b"},
		{[]string{"--provider", "claude", "--provider", "claude"}, "claude= claude-2="},
	} {
		got, err := names(c.args...)
		if err != nil || strings.Join(got, " ") != c.want {
			t.Errorf("%q: %q, %v; want %q", c.args, got, err, c.want)
		}
	}
	for _, bad := range [][]string{
		{"--provider", "nosuch"},
		{"--agent", "'unclosed"},
		{"--agent", "  "},
		{"--ssh", "me@host", "--cwd", "/w"},
		{"stray"},
	} {
		if got, err := names(bad...); err == nil {
			t.Errorf("%q: %q, want an error", bad, got)
		}
	}
}

// TestRunServesUntilCancelled runs the command as main does: it prints the
// page's address, which answers, and returns once its context ends.
func TestRunServesUntilCancelled(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"--cwd", dir, "--journal", filepath.Join(dir, "j.db")}, &out, io.Discard)
	}()
	var url string
	deadline := time.Now().Add(20 * time.Second)
	for url == "" {
		if time.Now().After(deadline) {
			t.Fatalf("no address printed: %q", out.String())
		}
		if s, ok := strings.CutPrefix(out.String(), "webui: open "); ok {
			url = strings.TrimSpace(s)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if !strings.HasPrefix(url, "http://127.0.0.1:") || !strings.Contains(url, "/?token=") {
		t.Fatalf("address %q", url)
	}
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("the printed address answers %d", resp.StatusCode)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("run: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("run did not return after its context ended")
	}
}

// syncBuffer is a bytes.Buffer safe for one writer and one reader.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestLocalAgentsGetAMinimalEnvironment: an unrelated variable of the
// user's never reaches a local agent, a profile's vendor variables do, and
// an SSH agent is sent nothing of this process's environment.
func TestLocalAgentsGetAMinimalEnvironment(t *testing.T) {
	t.Setenv("ACPHOST_WEBUI_UNRELATED", "x")
	t.Setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:1")
	o, err := parseArgs([]string{"--provider", "claude", "--agent", "my-agent --acp"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	specs, err := agentSpecs(o)
	if err != nil || len(specs) != 2 {
		t.Fatalf("specs %v, %v", specs, err)
	}
	for _, s := range specs {
		if s.Env == nil || slices.Contains(s.Env, "ACPHOST_WEBUI_UNRELATED=x") {
			t.Errorf("%s: env %q: want a minimal one", s.Name, s.Env)
		}
		if !slices.ContainsFunc(s.Env, func(kv string) bool { return strings.HasPrefix(kv, "PATH=") }) {
			t.Errorf("%s: env %q has no PATH", s.Name, s.Env)
		}
	}
	if !slices.Contains(specs[0].Env, "ANTHROPIC_BASE_URL=http://127.0.0.1:1") {
		t.Errorf("claude's env %q lacks its vendor variable", specs[0].Env)
	}
	o, err = parseArgs([]string{"--ssh", "me@host", "--agent", "my-agent"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if specs, err = agentSpecs(o); err != nil || specs[0].Env != nil {
		t.Errorf("ssh agent env %q, %v: want none sent", specs[0].Env, err)
	}
}

// A journal another program holds is refused naming that program's pid
// and the flag that chooses another file.
func TestRunJournalInUse(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "j.db")
	held, err := journal.Open(context.Background(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	err = run(ctx, []string{"--cwd", dir, "--journal", path}, io.Discard, io.Discard)
	if !errors.Is(err, journal.ErrInUse) || !strings.Contains(err.Error(), fmt.Sprintf("(pid %d)", os.Getpid())) || !strings.Contains(err.Error(), "--journal FILE") {
		t.Fatalf("run on a held journal: %v; want ErrInUse naming pid %d and --journal FILE", err, os.Getpid())
	}
}
