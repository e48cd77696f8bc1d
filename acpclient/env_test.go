package acpclient

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acphost/acphost/internal/sshtest"
)

// commandLinesContaining returns the command lines in the process table
// that contain s.
func commandLinesContaining(t *testing.T, s string) []string {
	t.Helper()
	paths, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	var out []string
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err == nil && bytes.Contains(data, []byte(s)) {
			out = append(out, p+": "+strings.ReplaceAll(string(data), "\x00", " "))
		}
	}
	return out
}

// TestSSHWithEnvReachesTheAgentOffTheCommandLine checks that variables given
// to an SSHTransport reach the remote agent exactly (quotes, newlines,
// shell syntax) and never appear on any command line in the process table,
// and that WithEnv leaves the original transport alone.
func TestSSHWithEnvReachesTheAgentOffTheCommandLine(t *testing.T) {
	srv := sshtest.Start(t, nil)
	const secret = "sk-remote-SECRET-7731"
	value := secret + " it's \"$HOME\"\nsecond line `id`"
	base := &SSHTransport{Client: srv.Dial(t), Path: "sh",
		Args: []string{"-c", `printf '%s\0%s\0' "$SECRET_TOKEN" "$PLAIN"; read x`},
		Env:  []string{"PLAIN=kept", "SECRET_TOKEN=old"}}
	var tr Transport = base
	et, ok := tr.(EnvTransport)
	if !ok {
		t.Fatal("SSHTransport is not an EnvTransport")
	}
	tr, err := et.WithEnv(map[string]string{"SECRET_TOKEN": value})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(base.Env, ",") != "PLAIN=kept,SECRET_TOKEN=old" {
		t.Fatalf("WithEnv changed the original: %q", base.Env)
	}
	rwc, err := tr.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer rwc.Close()
	r := bufio.NewReader(rwc)
	got, err := r.ReadString(0)
	if err != nil || strings.TrimSuffix(got, "\x00") != value {
		t.Fatalf("remote SECRET_TOKEN = %q, %v; want %q", got, err, value)
	}
	if plain, _ := r.ReadString(0); plain != "kept\x00" {
		t.Fatalf("remote PLAIN = %q", plain)
	}
	if lines := commandLinesContaining(t, secret); len(lines) > 0 {
		t.Fatalf("the secret is on a command line:\n%s", strings.Join(lines, "\n"))
	}
	if red := tr.(*SSHTransport).Redactor.Redact("key " + value); strings.Contains(red, secret) {
		t.Fatalf("the copy's Redactor does not mask the value: %q", red)
	}
}

func TestSSHRefusesBadEnvNames(t *testing.T) {
	for _, kv := range []string{"NOEQUALS", "=x", "1X=y", "A;rm=x", "A B=c", "A-B=c"} {
		tr := &SSHTransport{Client: nil, Path: "sh", Env: []string{kv}}
		if _, err := tr.Connect(context.Background()); err == nil || !strings.Contains(err.Error(), "not NAME=value") {
			t.Errorf("Env %q: %v", kv, err)
		}
	}
}

// TestCommandWithEnv checks CommandTransport's copy: vars on top of Env,
// replacing earlier values, the original untouched, the values redacted.
func TestCommandWithEnv(t *testing.T) {
	base := &CommandTransport{Path: "sh", Env: []string{"A=1", "KEEP=2"}, Redactor: &Redactor{Values: []string{"older-secret"}}}
	tr, err := base.WithEnv(map[string]string{"A": "new-secret-value"})
	if err != nil {
		t.Fatal(err)
	}
	cp := tr.(*CommandTransport)
	if strings.Join(cp.Env, ",") != "KEEP=2,A=new-secret-value" || strings.Join(base.Env, ",") != "A=1,KEEP=2" {
		t.Fatalf("env: copy %q, original %q", cp.Env, base.Env)
	}
	if got := cp.Redactor.Redact("new-secret-value older-secret"); got != "[REDACTED] [REDACTED]" {
		t.Fatalf("redacted %q", got)
	}
	if len(base.Redactor.Values) != 1 {
		t.Fatalf("the original's Redactor changed: %q", base.Redactor.Values)
	}
}
