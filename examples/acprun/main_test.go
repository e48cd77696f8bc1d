package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/acphost/acphost/acptest"
	"github.com/acphost/acphost/bridge"
	"github.com/acphost/acphost/internal/floodagent"
	"github.com/acphost/acphost/internal/sshtest"
)

// acprunBinary is the acprun command built once for the tests.
var acprunBinary string

func TestMain(m *testing.M) {
	floodagent.RunIfProcess()
	dir, err := os.MkdirTemp("", "acprun-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	acprunBinary = filepath.Join(dir, "acprun")
	// Agents on the in-process SSH servers run with this process's
	// environment: their checkpoints go to a cache directory of the run.
	os.Setenv("XDG_CACHE_HOME", filepath.Join(dir, "cache"))
	build := exec.Command("go", "build", "-o", acprunBinary, ".")
	build.Stderr = os.Stderr
	code := 1
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building acprun:", err)
	} else {
		code = m.Run()
	}
	os.RemoveAll(dir)
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

type result struct {
	code           int
	stdout, stderr string
}

// runAcprun runs the binary with args in a fresh HOME (so the journal and
// anything an agent keeps stay in the test's own directory); stdin is empty
// (not a terminal).
func runAcprun(t *testing.T, args ...string) result {
	t.Helper()
	return runAcprunIn(t, t.TempDir(), args...)
}

// runAcprunIn runs the binary with args and HOME home, where its journal is
// data/acphost/journal.db.
func runAcprunIn(t *testing.T, home string, args ...string) result {
	t.Helper()
	return runAcprunEnv(t, home, nil, args...)
}

// runAcprunEnv is runAcprunIn with the variables env ("NAME=value") added to
// acprun's environment.
func runAcprunEnv(t *testing.T, home string, env []string, args ...string) result {
	t.Helper()
	cmd := exec.Command(acprunBinary, args...)
	cmd.Env = append(os.Environ(), "NO_COLOR=1", "HOME="+home, "XDG_DATA_HOME="+filepath.Join(home, "data"))
	cmd.Env = append(cmd.Env, env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	code := 0
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatalf("running acprun: %v", err)
	}
	return result{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

// parseEvents reads --events output: each line must be the bridge's JSON
// form of an Event, byte for byte what json.Marshal writes for it.
func parseEvents(t *testing.T, stdout string) []bridge.Event {
	t.Helper()
	var events []bridge.Event
	sc := bufio.NewScanner(strings.NewReader(stdout))
	for sc.Scan() {
		var ev bridge.Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("stdout line is not a JSON object: %q: %v", sc.Text(), err)
		}
		if ev.Bridge == "" || ev.Kind == "" {
			t.Errorf("line without bridge or kind: %s", sc.Text())
		}
		if again, _ := json.Marshal(ev); string(again) != sc.Text() {
			t.Errorf("line is not the bridge's form of its event:\n got  %s\n form %s", sc.Text(), again)
		}
		events = append(events, ev)
	}
	return events
}

// kinds lists the kinds in order, runs of one kind folded into one (text
// deltas may be merged when the reader lags), ext events named by method.
// Decision events are left out: checkDecisions looks at them.
func kinds(events []bridge.Event) []string {
	var out []string
	for _, ev := range events {
		if ev.Kind == bridge.KindDecision {
			continue
		}
		k := string(ev.Kind)
		if k == "ext" {
			k += ":" + ev.Method
		}
		if len(out) == 0 || out[len(out)-1] != k {
			out = append(out, k)
		}
	}
	return out
}

// checkSeq checks that each session's events are numbered 1, 2, 3, …
func checkSeq(t *testing.T, events []bridge.Event) {
	t.Helper()
	next := map[string]uint64{}
	for _, ev := range events {
		if ev.Session == "" {
			continue
		}
		next[ev.Session]++
		if ev.Seq != next[ev.Session] {
			t.Fatalf("session %s: seq %d, want %d", ev.Session, ev.Seq, next[ev.Session])
		}
	}
}

// checkDecisions checks the bridge's decision events for permission
// requests: each says outcome, by the app (acprun's --approve), and names a
// request a permission event announced before it.
func checkDecisions(t *testing.T, events []bridge.Event, outcome string) {
	t.Helper()
	asked := map[string]bool{}
	decided := 0
	defer func() {
		if decided == 0 {
			t.Errorf("no permission decision among the events")
		}
	}()
	for _, ev := range events {
		switch {
		case ev.Kind == bridge.KindPermission && ev.Permission != nil:
			asked[ev.Permission.ID] = true
		case ev.Kind == bridge.KindDecision && ev.Decision != nil && ev.Decision.Type == "permission":
			decided++
			if d := ev.Decision; d.Outcome != outcome || d.By != "app" || !asked[d.Request] {
				t.Errorf("decision %+v; want %s by the app for a request shown before", d, outcome)
			}
		}
	}
}

const demoContent = "Hello from the demo agent.\nThis file was written through ACP's fs/write_text_file.\n"

func TestDemoEvents(t *testing.T) {
	t.Parallel()
	cwd := t.TempDir()
	r := runAcprun(t, "--events", "--approve", "allow", "--cwd", cwd, "Add a note")
	if r.code != exitOK {
		t.Fatalf("exit status %d, want 0; stderr:\n%s", r.code, r.stderr)
	}
	events := parseEvents(t, r.stdout)
	checkSeq(t, events)
	checkDecisions(t, events, "allowed")
	want := []string{
		"session", "authority", "turn_start", "thinking", "plan", "text", "plan",
		"tool_start", "permission", // the app allowed (decisions: checkDecisions)
		"tool_update", "changes", "tool_end", // write: in progress, its before and after, completed
		"plan", "tool_start", "tool_end", "plan", // read it back
		"text", "usage", "turn_end", "changes", "exited", // what the turn changed
	}
	if got := kinds(events); !slices.Equal(got, want) {
		t.Errorf("kinds:\n got %q\nwant %q", got, want)
	}
	for _, ev := range events {
		switch ev.Kind {
		case "permission":
			if ev.Permission == nil || ev.Permission.ID == "" || ev.Tool == nil || ev.Tool.ID != "call_write" {
				t.Errorf("permission event %+v: want call_write's request", ev)
			}
		case "turn_end":
			if ev.StopReason != "end_turn" {
				t.Errorf("stopReason %q", ev.StopReason)
			}
		case "text":
			if strings.HasPrefix(ev.Text, "write ") && !strings.HasSuffix(ev.Text, ": ok") {
				t.Errorf("fs/write_text_file failed: %q", ev.Text)
			}
		}
	}
	got, err := os.ReadFile(filepath.Join(cwd, "acprun-demo.txt"))
	if err != nil || string(got) != demoContent {
		t.Errorf("written file = %q, %v; want %q", got, err, demoContent)
	}
}

func TestDemoHuman(t *testing.T) {
	t.Parallel()
	cwd := t.TempDir()
	r := runAcprun(t, "--approve", "allow", "--cwd", cwd, "Add", "a", "note")
	if r.code != exitOK {
		t.Fatalf("exit status %d, want 0; stderr:\n%s", r.code, r.stderr)
	}
	// The parts of the turn, in order.
	rest := r.stdout
	for _, part := range []string{
		"thinking: The user wants", "plan 0/3", "I'm the demo agent.",
		"○ Write acprun-demo.txt (edit) pending", "permission requested: Write acprun-demo.txt", "allowed",
		"✓ Write acprun-demo.txt (edit) completed", "✓ Read acprun-demo.txt (read) completed", "plan 3/3",
		"Done: acprun-demo.txt is in your workspace.", "usage: context 5.1k of 200k tokens",
	} {
		i := strings.Index(rest, part)
		if i < 0 {
			t.Fatalf("stdout lacks %q after the earlier parts; stdout:\n%s", part, r.stdout)
		}
		rest = rest[i+len(part):]
	}
	if strings.Contains(r.stdout, "\x1b[") {
		t.Errorf("escape sequences in output that is not a terminal:\n%q", r.stdout)
	}
	if strings.Contains(r.stdout, "\n\n") {
		t.Errorf("a blank line in the output:\n%s", r.stdout)
	}
	// The hint names the session's host key, which the journal knows.
	if m := resumeHintPattern.FindStringSubmatch(r.stderr); m == nil || m[1] == "sess_1" {
		t.Errorf("stderr does not say how to resume by key: %q", r.stderr)
	}
	if got, err := os.ReadFile(filepath.Join(cwd, "acprun-demo.txt")); err != nil || string(got) != demoContent {
		t.Errorf("written file = %q, %v", got, err)
	}
}

// Rejecting the request (as --approve reject does, and as the default does
// when stdin is not a terminal) writes nothing; the agent ends its turn
// normally, so the exit status is 0.
func TestDemoReject(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"--approve", "reject"}, {}} {
		cwd := t.TempDir()
		r := runAcprun(t, append(args, "--events", "--cwd", cwd, "Add a note")...)
		if r.code != exitOK {
			t.Fatalf("%q: exit status %d, want 0; stderr:\n%s", args, r.code, r.stderr)
		}
		events := parseEvents(t, r.stdout)
		checkDecisions(t, events, "rejected")
		var asked bool
		var toolEnd string
		for _, ev := range events {
			if ev.Kind == bridge.KindPermission && ev.Permission != nil {
				asked = true
			}
			if ev.Kind == bridge.KindToolEnd && ev.Tool != nil {
				toolEnd = ev.Tool.Status
			}
		}
		if !asked || toolEnd != "failed" {
			t.Errorf("%q: permission event %v, tool end %q; want a request, failed", args, asked, toolEnd)
		}
		if entries, _ := os.ReadDir(cwd); len(entries) != 0 {
			t.Errorf("%q: the workspace holds %v after a rejection", args, entries)
		}
	}
}

// The human form of a rejection: the answer, the failed row and the
// agent's reply, without blank lines between them.
func TestDemoHumanReject(t *testing.T) {
	t.Parallel()
	r := runAcprun(t, "--approve", "reject", "--cwd", t.TempDir(), "Add a note")
	if r.code != exitOK {
		t.Fatalf("exit status %d; stderr:\n%s", r.code, r.stderr)
	}
	want := "  rejected\n✗ Write acprun-demo.txt (edit) failed\nUnderstood: I left your workspace untouched.\n"
	if !strings.Contains(r.stdout, want) || strings.Contains(r.stdout, "\n\n") {
		t.Errorf("stdout lacks %q or has a blank line:\n%s", want, r.stdout)
	}
}

// In ask mode the host refuses the request itself (the permission event is
// followed by the policy's decision, and nobody is asked): no file.
func TestDemoAskMode(t *testing.T) {
	t.Parallel()
	cwd := t.TempDir()
	r := runAcprun(t, "--events", "--mode", "ask", "--approve", "allow", "--cwd", cwd, "Add a note")
	if r.code != exitOK {
		t.Fatalf("exit status %d; stderr:\n%s", r.code, r.stderr)
	}
	var decisions []bridge.Decision
	for _, ev := range parseEvents(t, r.stdout) {
		if ev.Kind == bridge.KindDecision && ev.Decision != nil {
			decisions = append(decisions, *ev.Decision)
		}
	}
	if len(decisions) != 1 || decisions[0].By != "policy" || decisions[0].Outcome != "cancelled" || decisions[0].Rule == "" {
		t.Errorf("decisions in ask mode: %+v; want one cancel by the policy, with its rule", decisions)
	}
	if entries, _ := os.ReadDir(cwd); len(entries) != 0 {
		t.Errorf("the workspace holds %v in ask mode", entries)
	}
}

func TestDemoResume(t *testing.T) {
	t.Parallel()
	r := runAcprun(t, "--events", "--resume", "saved-1", "--approve", "reject", "--cwd", t.TempDir(), "Continue")
	if r.code != exitOK {
		t.Fatalf("exit status %d; stderr:\n%s", r.code, r.stderr)
	}
	events := parseEvents(t, r.stdout)
	replayed := 0
	for _, ev := range events {
		if ev.Kind == "exited" {
			continue // agent-wide
		}
		if ev.Session != "saved-1" {
			t.Fatalf("event of session %q, want saved-1: %+v", ev.Session, ev)
		}
		if ev.Replay {
			replayed++
		}
	}
	if replayed != 2 {
		t.Errorf("%d replayed events, want 2", replayed)
	}
}

// Failures end with their documented status and a one-line reason.
func TestFailures(t *testing.T) {
	t.Parallel()
	fakeagent := acptest.BuildBinary(t)
	agent := func(s acptest.Script) string {
		return fmt.Sprintf("'%s' -script '%s'", fakeagent, acptest.WriteScript(t, s))
	}
	exit3 := 3
	tests := []struct {
		name   string
		args   []string
		code   int
		reason string
	}{
		{"missing binary", []string{"--agent", "/nonexistent/dir/agent --acp"}, exitNotFound, "acprun: agent not found: "},
		{"bad mode", []string{"--mode", "yolo"}, exitUsage, `acprun: --mode "yolo"`},
		{"bad quote", []string{"--agent", "agent 'x"}, exitUsage, "acprun: --agent"},
		{"unknown provider", []string{"--provider", "nope"}, exitUsage, `acprun: --provider "nope": unknown`},
		{"handshake", []string{"--agent", agent(acptest.Script{Initialize: acptest.InitializeScript{Error: &acptest.Error{Code: -32603, Message: "broken"}}})}, exitHandshake, "acprun: handshake failed: "},
		{"auth required", []string{"--agent", agent(acptest.Script{
			Initialize: acptest.InitializeScript{AuthMethods: json.RawMessage(`[{"id":"login","name":"Log in"}]`)},
			NewSession: acptest.NewSessionScript{RequireAuth: "login"},
		})}, exitAuth, "acprun: auth required: "},
		{"died", []string{"--agent", agent(acptest.Script{Prompts: []acptest.Turn{{Steps: []acptest.Step{{Text: "hi"}, {Stderr: "boom"}, {Exit: &exit3}}}}})}, exitDied, "acprun: agent died: "},
		{"timeout", []string{"--timeout", "300ms", "--agent", agent(acptest.Script{Prompts: []acptest.Turn{{Steps: []acptest.Step{{WaitCancel: true}}}}})}, exitTimeout, "acprun: timeout: "},
		{"max tokens", []string{"--agent", agent(acptest.Script{Prompts: []acptest.Turn{{StopReason: "max_tokens"}}})}, exitFailed, "acprun: the turn ended with max_tokens"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := runAcprun(t, append(tt.args, "--cwd", t.TempDir(), "hello")...)
			if r.code != tt.code {
				t.Errorf("exit status %d, want %d; stderr:\n%s", r.code, tt.code, r.stderr)
			}
			last := strings.TrimSpace(r.stderr)
			if i := strings.LastIndex(last, "\n"); i >= 0 {
				last = last[i+1:]
			}
			if !strings.HasPrefix(last, tt.reason) {
				t.Errorf("last stderr line %q, want it to start with %q; stderr:\n%s", last, tt.reason, r.stderr)
			}
		})
	}
}

// A real agent process: sign-in with --auth, then a turn that ends well.
func TestAgentProcess(t *testing.T) {
	t.Parallel()
	script := acptest.WriteScript(t, acptest.Script{
		Initialize: acptest.InitializeScript{AuthMethods: json.RawMessage(`[{"id":"login","name":"Log in"}]`)},
		NewSession: acptest.NewSessionScript{RequireAuth: "login"},
		Prompts:    []acptest.Turn{{Steps: []acptest.Step{{Text: "hello from a process"}}}},
	})
	r := runAcprun(t, "--auth", "login", "--agent", fmt.Sprintf("'%s' -script '%s'", acptest.BuildBinary(t), script), "--cwd", t.TempDir(), "hi")
	if r.code != exitOK || !strings.Contains(r.stdout, "hello from a process") {
		t.Errorf("exit status %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}

// --ssh starts the agent through SSH and serves its files over SFTP.
func TestSSH(t *testing.T) {
	t.Parallel()
	server := sshtest.Start(t, nil)
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "remote.txt")
	script := acptest.WriteScript(t, acptest.Script{Prompts: []acptest.Turn{{Steps: []acptest.Step{
		{WriteFile: &acptest.WriteFile{Path: file, Content: "over SFTP\n"}},
	}}}})
	r := runAcprun(t, "--ssh", server.User+"@"+server.Addr, "--ssh-key", server.UserKeyFile, "--ssh-known-hosts", server.KnownHostsFile,
		"--cwd", dir, "--agent", fmt.Sprintf("'%s' -script '%s'", acptest.BuildBinary(t), script), "hi")
	if r.code != exitOK {
		t.Fatalf("exit status %d; stderr:\n%s", r.code, r.stderr)
	}
	if got, err := os.ReadFile(file); err != nil || string(got) != "over SFTP\n" {
		t.Errorf("remote.txt = %q, %v; stdout:\n%s", got, err, r.stdout)
	}
}

// A failure to start the agent on the SSH host is a one-line reason and the
// documented exit status, never a panic.
func TestSSHFailures(t *testing.T) {
	t.Parallel()
	server := sshtest.Start(t, nil)
	fakeagent := acptest.BuildBinary(t)
	broken := acptest.WriteScript(t, acptest.Script{Initialize: acptest.InitializeScript{Error: &acptest.Error{Code: -32603, Message: "broken"}}})
	tests := []struct {
		name   string
		agent  string
		code   int
		reason string
	}{
		{"missing binary", "/missing/binary --acp", exitNotFound, "acprun: agent not found: "},
		{"handshake", fmt.Sprintf("'%s' -script '%s'", fakeagent, broken), exitHandshake, "acprun: handshake failed: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := runAcprun(t, "--ssh", server.User+"@"+server.Addr, "--ssh-key", server.UserKeyFile, "--ssh-known-hosts", server.KnownHostsFile,
				"--cwd", t.TempDir(), "--agent", tt.agent, "hi")
			if r.code != tt.code {
				t.Errorf("exit status %d, want %d; stderr:\n%s", r.code, tt.code, r.stderr)
			}
			if strings.Contains(r.stderr, "panic") || strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 && !strings.HasPrefix(lastLine(r.stderr), "acprun: ") {
				t.Errorf("stderr is not one clear line:\n%s", r.stderr)
			}
			if last := lastLine(r.stderr); !strings.HasPrefix(last, tt.reason) {
				t.Errorf("last stderr line %q, want it to start with %q", last, tt.reason)
			}
		})
	}
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndex(s, "\n"); i >= 0 {
		return s[i+1:]
	}
	return s
}

func TestParseArgs(t *testing.T) {
	o, err := parseArgs([]string{"--events", "fix", "the", "--mode", "full", "bug", "--", "--not-a-flag"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if !o.events || o.mode != "full" || !slices.Equal(o.args, []string{"fix", "the", "bug", "--not-a-flag"}) {
		t.Errorf("parsed %+v", o)
	}
	o, err = parseArgs([]string{"doctor", "kiro", "--timeout", "3s"}, &bytes.Buffer{})
	if err != nil || o.command != "doctor" || !slices.Equal(o.args, []string{"kiro"}) {
		t.Errorf("doctor: %+v, %v", o, err)
	}
}

// --provider with --ssh: the profile's program is found by the remote
// shell, here the fake agent installed as claude-agent-acp in the PATH the
// in-process SSH server gives its commands.
func TestSSHProvider(t *testing.T) {
	server := sshtest.Start(t, nil)
	bin := t.TempDir()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "from-profile.txt")
	script := acptest.WriteScript(t, acptest.Script{Prompts: []acptest.Turn{{Steps: []acptest.Step{
		{WriteFile: &acptest.WriteFile{Path: file, Content: "profile over SSH\n"}},
	}}}})
	wrapper := fmt.Sprintf("#!/bin/sh\nexec '%s' -script '%s'\n", acptest.BuildBinary(t), script)
	if err := os.WriteFile(filepath.Join(bin, "claude-agent-acp"), []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	r := runAcprun(t, "--ssh", server.User+"@"+server.Addr, "--ssh-key", server.UserKeyFile, "--ssh-known-hosts", server.KnownHostsFile,
		"--cwd", dir, "--provider", "claude", "--events", "hi")
	if r.code != exitOK {
		t.Fatalf("exit status %d; stderr:\n%s", r.code, r.stderr)
	}
	if got, err := os.ReadFile(file); err != nil || string(got) != "profile over SSH\n" {
		t.Errorf("from-profile.txt = %q, %v; stdout:\n%s", got, err, r.stdout)
	}
}
