package bridge

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/acptest"
	"github.com/acphost/acphost/internal/fakeclock"
	"github.com/acphost/acphost/internal/waitfor"
)

// userRequestKind is one kind of request that waits on the user, as the
// shared-mechanism tests drive it: an agent script that asks it in a turn,
// and the app's answer.
type userRequestKind struct {
	name   string
	kind   Kind
	config func(t *testing.T) Config
	answer func(Event) error
	done   func(Event) <-chan struct{}
}

func userRequestKinds() []userRequestKind {
	return []userRequestKind{
		{
			name: "permission", kind: KindPermission,
			config: func(t *testing.T) Config {
				return agentConfig(t, "perm", acptest.Script{Prompts: []acptest.Turn{{Steps: []acptest.Step{
					{Permission: &acptest.Permission{}}, {Text: "after"}}}}})
			},
			answer: func(ev Event) error { return ev.Permission.Allow() },
			done:   func(ev Event) <-chan struct{} { return ev.Permission.Done() },
		},
		{
			name: "elicitation", kind: KindElicitation,
			config: func(t *testing.T) Config {
				ask := acptest.Step{Request: &acptest.Request{Method: "elicitation/create", Params: raw(
					`{"sessionId":"sess_1","message":"Which name?","mode":"form","requestedSchema":{"type":"object","properties":{}}}`)}}
				cfg := agentConfig(t, "ask", acptest.Script{NewSession: acptest.NewSessionScript{SessionIDs: []string{"sess_1"}},
					Prompts: []acptest.Turn{{Steps: []acptest.Step{ask, {Text: "after"}}}}})
				cfg.ElicitationModes = []string{"form"}
				return cfg
			},
			answer: func(ev Event) error { return ev.Elicitation.Accept(map[string]any{}) },
			done:   func(ev Event) <-chan struct{} { return ev.Elicitation.Done() },
		},
		{
			name: "auth", kind: KindAuthRequired,
			config: func(t *testing.T) Config {
				return agentConfig(t, "auth", acptest.Script{
					Initialize: acptest.InitializeScript{AuthMethods: raw(`[{"id":"oauth","name":"Log in"}]`)},
					Prompts:    []acptest.Turn{{Error: &acptest.Error{Code: -32000, Message: "Authentication required"}}}})
			},
			answer: func(ev Event) error { return ev.Auth.Decline() },
			done:   func(ev Event) <-chan struct{} { return ev.Auth.Done() },
		},
	}
}

// startUserRequest starts a turn whose agent asks k, and returns the
// request's event and the turn's result.
func startUserRequest(t *testing.T, k userRequestKind, clock Clock) (*Bridge, *Session, Event, <-chan error) {
	t.Helper()
	h, rec := newHostAndRecorder(t, nil)
	cfg := k.config(t)
	cfg.Clock = clock
	b, err := h.Start(ctxT(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	s, err := b.OpenSession(ctxT(t), SessionConfig{Cwd: "/w", Policy: Policy{Mode: ModeBuild}})
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() { _, err := s.Prompt(waitfor.Context(t), acpclient.TextBlock("x")); errc <- err }()
	ev := rec.waitFor(k.name, func(ev Event) bool { return ev.Kind == k.kind })
	return b, s, ev, errc
}

func waitClosed(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: not answered", what)
	}
}

func waitErr(t *testing.T, errc <-chan error) error {
	t.Helper()
	select {
	case err := <-errc:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("the turn did not end")
		return nil
	}
}

// TestUserRequestsAnswerOnceWithTheWatchdogPaused: each kind of request
// holds the turn's watchdog stopped while it waits (hours of the user's
// time do not expire the turn), takes exactly one answer, and the second
// answer is ErrAlreadyAnswered.
func TestUserRequestsAnswerOnceWithTheWatchdogPaused(t *testing.T) {
	for _, k := range userRequestKinds() {
		t.Run(k.name, func(t *testing.T) {
			clock := fakeClock{fakeclock.New()}
			_, _, ev, errc := startUserRequest(t, k, clock)
			if n := clock.Pending(); n != 0 {
				t.Fatalf("%d timers armed while the user decides: the watchdog runs", n)
			}
			clock.Advance(3 * time.Hour)
			if err := k.answer(ev); err != nil {
				t.Fatalf("first answer: %v", err)
			}
			if err := k.answer(ev); err != ErrAlreadyAnswered {
				t.Fatalf("second answer: %v, want ErrAlreadyAnswered", err)
			}
			waitClosed(t, k.done(ev), "Done")
			err := waitErr(t, errc)
			if errors.Is(err, ErrInactive) {
				t.Fatalf("the watchdog expired the turn: %v", err)
			}
			if k.kind == KindAuthRequired {
				if !errors.Is(err, ErrAuthDeclined) {
					t.Fatalf("declined sign-in: %v", err)
				}
			} else if err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestUserRequestsCancelledWithTheTurn: cancelling the turn answers each
// kind of pending request (a sign-in too, which used to wait on), so a
// later answer is ErrAlreadyAnswered.
func TestUserRequestsCancelledWithTheTurn(t *testing.T) {
	for _, k := range userRequestKinds() {
		t.Run(k.name, func(t *testing.T) {
			_, s, ev, errc := startUserRequest(t, k, nil)
			s.Cancel()
			waitClosed(t, k.done(ev), "Done after the cancel")
			if err := k.answer(ev); !errors.Is(err, ErrAlreadyAnswered) {
				t.Fatalf("answer after the cancel: %v", err)
			}
			err := waitErr(t, errc)
			if k.kind == KindAuthRequired && (!errors.Is(err, ErrAuthRequired) || !errors.Is(err, context.Canceled)) {
				t.Fatalf("cancelled sign-in: %v", err)
			}
		})
	}
}

// TestUserRequestsCancelledByClose: closing the bridge answers each kind of
// pending request.
func TestUserRequestsCancelledByClose(t *testing.T) {
	for _, k := range userRequestKinds() {
		t.Run(k.name, func(t *testing.T) {
			b, _, ev, errc := startUserRequest(t, k, nil)
			b.Close()
			waitClosed(t, k.done(ev), "Done after Close")
			if err := k.answer(ev); !errors.Is(err, ErrAlreadyAnswered) {
				t.Fatalf("answer after Close: %v", err)
			}
			waitErr(t, errc)
		})
	}
}

// TestSignInOutsideASessionEndsWithClose: a sign-in asked while opening a
// session (no session yet, so the request is the bridge's) is declined by
// Close, and OpenSession fails with ErrClosed instead of waiting on.
func TestSignInOutsideASessionEndsWithClose(t *testing.T) {
	h, rec := newHostAndRecorder(t, nil)
	b, _ := startPlain(t, h, acptest.Script{Initialize: acptest.InitializeScript{AuthMethods: raw(`[{"id":"oauth","name":"Log in"}]`)},
		NewSession: acptest.NewSessionScript{RequireAuth: "oauth"}}, "", Config{})
	errc := make(chan error, 1)
	go func() { _, err := b.OpenSession(waitfor.Context(t), SessionConfig{Cwd: "/w"}); errc <- err }()
	ev := rec.waitFor("auth", func(ev Event) bool { return ev.Kind == KindAuthRequired })
	if ev.Session != "" {
		t.Fatalf("sign-in for session/new carries session %q", ev.Session)
	}
	b.Close()
	waitClosed(t, ev.Auth.Done(), "Done after Close")
	if err := waitErr(t, errc); !errors.Is(err, ErrAuthRequired) || !errors.Is(err, ErrClosed) {
		t.Fatalf("OpenSession: %v", err)
	}
	if err := ev.Auth.Answer(AuthAnswer{MethodID: "oauth"}); !errors.Is(err, ErrAlreadyAnswered) {
		t.Fatalf("answer after Close: %v", err)
	}
}

func TestErrAlreadyAnsweredIsGeneric(t *testing.T) {
	if got := ErrAlreadyAnswered.Error(); got != "bridge: request already answered" {
		t.Fatalf("ErrAlreadyAnswered = %q", got)
	}
}
