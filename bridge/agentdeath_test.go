package bridge

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/acptest"
	"github.com/acphost/acphost/internal/fakebin"
	"github.com/acphost/acphost/internal/fakeclock"
	"github.com/acphost/acphost/internal/waitfor"
)

// TestRetryBackoffEndsWhenTheAgentDies: a turn waiting out the backoff
// before it retries a transient failure ends as soon as the agent dies,
// with its exit error; the clock never moves, so only the death can end
// the wait.
func TestRetryBackoffEndsWhenTheAgentDies(t *testing.T) {
	code := 7
	script := acptest.Script{Prompts: []acptest.Turn{{Match: "go",
		Error: &acptest.Error{Code: -32603, Message: "flaky backend"},
		After: []acptest.Step{{Stderr: "backend gone for good"}, {Exit: &code}}}}}
	provider := &Provider{
		TransientError: func(err error) bool { return strings.Contains(err.Error(), "flaky backend") },
		RetryBackoff:   []time.Duration{time.Hour},
	}
	h, _ := newHostAndRecorder(t, nil)
	in := fakebin.Install(t, t.TempDir(), "agent", script, "")
	profile := &Profile{Name: "plain", Binaries: []string{"agent"}, NewProvider: func(*Launch) *Provider { return provider }}
	b, err := h.StartProfile(ctxT(t), profile, LaunchOptions{Binary: in.Path}, Config{ID: "retry", Clock: fakeClock{fakeclock.New()}})
	if err != nil {
		t.Fatal(err)
	}
	s, err := b.OpenSession(context.Background(), SessionConfig{Cwd: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { _, err := s.Prompt(ctx, acpclient.TextBlock("go")); done <- err }()
	err = waitfor.Recv(t, done, "the call to end after the agent died (the clock never moves: a wait on it would never end)")
	var exit *acpclient.ExitError
	if !errors.As(err, &exit) || !strings.Contains(err.Error(), "backend gone for good") || !strings.Contains(err.Error(), "flaky backend") {
		t.Fatalf("Prompt returned %v, want the agent's exit error with its stderr, naming the failure it was to retry", err)
	}
}

// TestCancelGraceEndsWhenTheAgentDies: a cancelled turn whose agent dies
// instead of answering ends at once with the agent's exit error, not after
// the cancel grace (the clock never moves) with ErrCancelIgnored.
func TestCancelGraceEndsWhenTheAgentDies(t *testing.T) {
	code := 9
	script := acptest.Script{Prompts: []acptest.Turn{{Match: "go", IgnoreCancel: true,
		Steps: []acptest.Step{{Text: "working"}, {WaitCancel: true}, {Stderr: "crashed while cancelling"}, {Exit: &code}}}}}
	h, rec := newHostAndRecorder(t, nil)
	in := fakebin.Install(t, t.TempDir(), "agent", script, "")
	b, err := h.StartProfile(ctxT(t), &Profile{Name: "plain", Binaries: []string{"agent"}}, LaunchOptions{Binary: in.Path},
		Config{ID: "grace", Clock: fakeClock{fakeclock.New()}})
	if err != nil {
		t.Fatal(err)
	}
	s, err := b.OpenSession(context.Background(), SessionConfig{Cwd: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := s.Prompt(ctxT(t), acpclient.TextBlock("go")); done <- err }()
	rec.waitFor("the agent at work", func(ev Event) bool { return ev.Kind == KindText && ev.Text == "working" })
	s.Cancel()
	err = waitfor.Recv(t, done, "the call to end after the agent died (the clock never moves: a wait on it would never end)")
	var exit *acpclient.ExitError
	if !errors.As(err, &exit) || !strings.Contains(err.Error(), "crashed while cancelling") || errors.Is(err, ErrCancelIgnored) {
		t.Fatalf("Prompt returned %v, want the agent's exit error with its stderr", err)
	}
}

// TestSignInWaitEndsWhenTheAgentDies: a sign-in only the agent that asked
// can carry out ends when that agent dies, declined with its exit error,
// instead of waiting for an answer nothing could use.
func TestSignInWaitEndsWhenTheAgentDies(t *testing.T) {
	code := 4
	script := acptest.Script{Prompts: []acptest.Turn{{Match: "go",
		Error: &acptest.Error{Code: -32000, Message: "Authentication required", Data: raw(`{"authMethods":[{"id":"oauth","name":"Log in","type":"agent"}]}`)},
		After: []acptest.Step{{Stderr: "token store corrupt"}, {Exit: &code}}}}}
	h, rec := newHostAndRecorder(t, nil)
	in := fakebin.Install(t, t.TempDir(), "agent", script, "")
	b, err := h.StartProfile(ctxT(t), &Profile{Name: "plain", Binaries: []string{"agent"}}, LaunchOptions{Binary: in.Path}, Config{ID: "signin"})
	if err != nil {
		t.Fatal(err)
	}
	s, err := b.OpenSession(context.Background(), SessionConfig{Cwd: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := s.Prompt(ctxT(t), acpclient.TextBlock("go")); done <- err }()
	err = waitfor.Recv(t, done, "the call to end after the agent died (the clock never moves: a wait on it would never end)")
	var exit *acpclient.ExitError
	if !errors.Is(err, ErrAuthRequired) || !errors.As(err, &exit) || !strings.Contains(err.Error(), "token store corrupt") {
		t.Fatalf("Prompt returned %v, want ErrAuthRequired with the agent's exit error and stderr", err)
	}
	d := rec.waitFor("decision", func(ev Event) bool { return ev.Kind == KindDecision }).Decision
	if d.Type != "auth" || d.Outcome != "declined" || d.By != "host" || d.Rule != "agent process exited" {
		t.Errorf("decision %+v", *d)
	}
}

// TestPermissionWaitEndsWhenTheAgentDies: a permission request waiting for
// the app when its agent dies is settled by the host, and its turn ends
// with the agent's exit error.
func TestPermissionWaitEndsWhenTheAgentDies(t *testing.T) {
	code := 5
	script := acptest.Script{Prompts: []acptest.Turn{
		{Match: "ask", Steps: []acptest.Step{{Permission: &acptest.Permission{ToolCall: raw(`{"toolCallId":"t1","title":"rm"}`)}}}},
		{Match: "die", Steps: []acptest.Step{{Stderr: "segfault"}, {Exit: &code}}},
	}}
	h, rec := newHostAndRecorder(t, nil)
	in := fakebin.Install(t, t.TempDir(), "agent", script, "")
	b, err := h.StartProfile(ctxT(t), &Profile{Name: "plain", Binaries: []string{"agent"}}, LaunchOptions{Binary: in.Path}, Config{ID: "permdeath"})
	if err != nil {
		t.Fatal(err)
	}
	s1, err := b.OpenSession(context.Background(), SessionConfig{Cwd: t.TempDir(), Policy: Policy{Mode: ModeBuild}})
	if err != nil {
		t.Fatal(err)
	}
	s2, err := b.OpenSession(context.Background(), SessionConfig{Cwd: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := s1.Prompt(ctxT(t), acpclient.TextBlock("ask")); done <- err }()
	perm := rec.waitFor("permission event", func(ev Event) bool { return ev.Kind == KindPermission }).Permission
	s2.Prompt(ctxT(t), acpclient.TextBlock("die"))
	err = waitfor.Recv(t, done, "the call to end after the agent died (the clock never moves: a wait on it would never end)")
	var exit *acpclient.ExitError
	if !errors.As(err, &exit) || !strings.Contains(err.Error(), "segfault") {
		t.Errorf("Prompt returned %v, want the agent's exit error with its stderr", err)
	}
	waitfor.Recv(t, perm.Done(), "the permission request to end after the agent died (the clock never moves: a wait on it would never end)")
	if err := perm.Allow(); !errors.Is(err, ErrAlreadyAnswered) {
		t.Errorf("Allow after the agent died: %v", err)
	}
}
