package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acphost/acphost/acptest"
	"github.com/acphost/acphost/bridge"
	"github.com/acphost/acphost/internal/fakebin"
)

// askedSession is a session whose agent needs consent, counting grants.
type askedSession struct {
	st      bridge.AuthorityState
	granted int
}

func (s *askedSession) Authority() bridge.AuthorityState { return s.st }
func (s *askedSession) GrantAutonomy()                   { s.granted++ }

func needsConsent() *askedSession {
	return &askedSession{st: bridge.AuthorityState{State: bridge.AuthorityAgentAutonomous, Blocked: true, ConsentNeeded: true,
		Reason: `config option "mode" = "build" acts without asking`}}
}

// TestConsentQuestion: on a terminal acprun asks once, naming what acts
// unasked, and grants only on yes; --allow-autonomous grants without
// asking; without a terminal it refuses, naming the flag; a session that
// needs no consent is not asked.
func TestConsentQuestion(t *testing.T) {
	ctx := context.Background()
	for _, answer := range []string{"y\n", "yes\n", "n\n", "\n", ""} {
		var prompt bytes.Buffer
		s := needsConsent()
		c := &consenter{ask: true, prompt: &prompt, stdin: &lineReader{in: strings.NewReader(answer)}}
		err := c.settle(ctx, s)
		yes := answer == "y\n" || answer == "yes\n"
		if yes != (err == nil) || yes != (s.granted == 1) {
			t.Errorf("answer %q: %v, granted %d times", answer, err, s.granted)
		}
		if !strings.Contains(prompt.String(), `"mode" = "build"`) || !strings.Contains(prompt.String(), "[y/N]") {
			t.Errorf("answer %q: question %q", answer, prompt.String())
		}
		if !yes && !strings.Contains(err.Error(), allowAutonomousFlag) {
			t.Errorf("answer %q: refusal %q does not name %s", answer, err, allowAutonomousFlag)
		}
	}
	var prompt bytes.Buffer
	s := needsConsent()
	if err := (&consenter{allow: true, ask: true, prompt: &prompt}).settle(ctx, s); err != nil || s.granted != 1 || prompt.Len() != 0 {
		t.Errorf("--allow-autonomous: %v, granted %d, asked %q", err, s.granted, prompt.String())
	}
	s = needsConsent()
	err := (&consenter{prompt: &prompt}).settle(ctx, s)
	var ee *exitError
	if !errors.As(err, &ee) || !strings.Contains(err.Error(), allowAutonomousFlag) || s.granted != 0 || prompt.Len() != 0 {
		t.Errorf("without a terminal: %v, granted %d, asked %q", err, s.granted, prompt.String())
	}
	quiet := &askedSession{st: bridge.AuthorityState{State: bridge.AuthorityProtected}}
	if err := (&consenter{ask: true, prompt: &prompt}).settle(ctx, quiet); err != nil || quiet.granted != 0 || prompt.Len() != 0 {
		t.Errorf("protected: %v, granted %d, asked %q", err, quiet.granted, prompt.String())
	}
}

// TestOpenCodeInBuild: acprun --provider opencode in its default Build,
// stdin not a terminal: without an opencode.json that asks, the run
// stops at once with a message naming --allow-autonomous (it must not
// wait for an answer); with the flag the turn runs, reported
// agent-autonomous; with the project's or the user's opencode.json that
// asks it runs protected, no flag needed.
func TestOpenCodeInBuild(t *testing.T) {
	bin := t.TempDir()
	fakebin.Install(t, bin, "opencode", acptest.Script{
		NewSession: acptest.NewSessionScript{ConfigOptions: []byte(`[{"id":"mode","name":"Session Mode","category":"mode","type":"select","currentValue":"build","options":[{"value":"build","name":"build"},{"value":"plan","name":"plan"}]}]`)},
		Prompts:    []acptest.Turn{{Steps: []acptest.Step{{Text: "done"}}}},
	}, "")
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	run := func(home, cwd string, args ...string) result {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, acprunBinary, append([]string{"--provider", "opencode", "--cwd", cwd}, args...)...)
		cmd.Env = append(os.Environ(), "NO_COLOR=1", "HOME="+home, "XDG_DATA_HOME="+filepath.Join(home, "data"))
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		if ctx.Err() != nil {
			t.Fatalf("acprun %q did not end within 60s (waiting for an answer on a stdin that is no terminal?); stderr:\n%s", args, stderr.String())
		}
		code := 0
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			code = exit.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return result{code: code, stdout: stdout.String(), stderr: stderr.String()}
	}
	r := run(t.TempDir(), t.TempDir(), "hi")
	if r.code != exitFailed || !strings.Contains(r.stderr, allowAutonomousFlag) || strings.Contains(r.stdout, "done") {
		t.Errorf("without consent: exit %d, stdout %q, stderr:\n%s", r.code, r.stdout, r.stderr)
	}
	r = run(t.TempDir(), t.TempDir(), allowAutonomousFlag, "hi")
	if r.code != exitOK || !strings.Contains(r.stdout, "done") || !strings.Contains(r.stderr, "authority agent-autonomous") {
		t.Errorf("%s: exit %d, stdout %q, stderr:\n%s", allowAutonomousFlag, r.code, r.stdout, r.stderr)
	}
	asks := t.TempDir()
	if err := os.WriteFile(filepath.Join(asks, "opencode.json"), []byte(`{"permission":{"edit":"ask","bash":"ask"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	r = run(t.TempDir(), asks, "hi")
	if r.code != exitOK || !strings.Contains(r.stdout, "done") || !strings.Contains(r.stderr, "authority protected") {
		t.Errorf("the project's opencode.json asks: exit %d, stdout %q, stderr:\n%s", r.code, r.stdout, r.stderr)
	}
	home := t.TempDir()
	user := filepath.Join(home, ".config", "opencode", "opencode.json")
	if err := os.MkdirAll(filepath.Dir(user), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(user, []byte(`{"permission":"ask"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	r = run(home, t.TempDir(), "hi")
	if r.code != exitOK || !strings.Contains(r.stdout, "done") || !strings.Contains(r.stderr, "authority protected") {
		t.Errorf("the user's opencode.json asks: exit %d, stdout %q, stderr:\n%s", r.code, r.stdout, r.stderr)
	}
}
