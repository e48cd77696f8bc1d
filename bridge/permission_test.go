package bridge

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/acptest"
)

// An answer names an option by id, so an id two options share could be read
// as either: such options are never selected, in any mode.
func TestAmbiguousOptionIDsCancel(t *testing.T) {
	type outcome struct {
		agentSaw string // the agent's report of the answer it got
		appErr   error  // what Allow or Reject returned (Build only)
	}
	cancelled := outcome{agentSaw: "permission: cancelled"}
	ambiguous := outcome{agentSaw: "permission: cancelled", appErr: ErrAmbiguousOption}
	selected := func(id string) outcome { return outcome{agentSaw: "permission: selected " + id} }
	opt := func(id, kind string) acptest.PermissionOption {
		return acptest.PermissionOption{OptionID: id, Name: kind, Kind: kind}
	}

	sets := []struct {
		name    string
		options []acptest.PermissionOption
		// what each mode leads to
		full, allow, reject outcome
	}{
		{"reject and allow share an id",
			[]acptest.PermissionOption{opt("same", "reject_once"), opt("same", "allow_once")},
			cancelled, ambiguous, ambiguous},
		{"allow-once ids repeat, allow-always distinct",
			[]acptest.PermissionOption{opt("always", "allow_always"), opt("dup", "allow_once"), opt("dup", "allow_once"), opt("no", "reject_once")},
			cancelled, ambiguous, selected("no")},
		{"allow-once without an id",
			[]acptest.PermissionOption{opt("", "allow_once"), opt("no", "reject_once")},
			cancelled, ambiguous, selected("no")},
		{"one of two allow-once ids shared with reject",
			[]acptest.PermissionOption{opt("yes", "allow_once"), opt("same", "allow_once"), opt("same", "reject_once")},
			cancelled, ambiguous, ambiguous},
		{"reject shares an id with allow-always",
			[]acptest.PermissionOption{opt("yes", "allow_once"), opt("same", "allow_always"), opt("same", "reject_once")},
			selected("yes"), selected("yes"), ambiguous},
		{"distinct ids",
			[]acptest.PermissionOption{opt("yes", "allow_once"), opt("no", "reject_once")},
			selected("yes"), selected("yes"), selected("no")},
	}
	modes := []struct {
		name   string
		policy Policy
		answer func(*PermissionRequest) error // the app's answer in Build
		want   func(full, allow, reject outcome) outcome
	}{
		{"full", Policy{Mode: ModeFull}, nil, func(f, _, _ outcome) outcome { return f }},
		{"build allows", Policy{Mode: ModeBuild}, (*PermissionRequest).Allow, func(_, a, _ outcome) outcome { return a }},
		{"build rejects", Policy{Mode: ModeBuild}, (*PermissionRequest).Reject, func(_, _, r outcome) outcome { return r }},
		{"ask", Policy{Mode: ModeAsk}, nil, func(_, _, _ outcome) outcome { return cancelled }},
		{"plan", Policy{Mode: ModePlan}, nil, func(_, _, _ outcome) outcome { return cancelled }},
	}
	for i, set := range sets {
		for j, mode := range modes {
			t.Run(set.name+"/"+mode.name, func(t *testing.T) {
				want := mode.want(set.full, set.allow, set.reject)
				script := acptest.Script{Prompts: []acptest.Turn{{Steps: []acptest.Step{
					{Permission: &acptest.Permission{Options: set.options}},
				}}}}
				h, rec := newHostAndRecorder(t, nil)
				appErr := make(chan error, 1)
				if mode.answer != nil {
					rec.setPermissionAnswer(func(p *PermissionRequest) { appErr <- mode.answer(p) })
				}
				id := fmt.Sprintf("o%d-%d", i, j)
				b, err := h.Start(context.Background(), agentConfig(t, id, script))
				if err != nil {
					t.Fatal(err)
				}
				s, err := b.OpenSession(context.Background(), SessionConfig{Cwd: "/w", Policy: mode.policy})
				if err != nil {
					t.Fatal(err)
				}
				// Bounded: a request nobody answers must fail the test, not hang it.
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				if _, err := s.Prompt(ctx, acpclient.TextBlock("x")); err != nil {
					t.Fatal(err)
				}
				rec.waitFor(want.agentSaw, func(ev Event) bool { return ev.Kind == KindText && ev.Text == want.agentSaw })
				if mode.answer == nil {
					return
				}
				if err := <-appErr; !errors.Is(err, want.appErr) || (want.appErr == nil) != (err == nil) {
					t.Errorf("the app's answer returned %v, want %v", err, want.appErr)
				}
			})
		}
	}
}

func TestChooseOption(t *testing.T) {
	opts := []acpclient.PermissionOption{
		{OptionID: "a1", Kind: acpclient.PermissionAllowOnce},
		{OptionID: "a2", Kind: acpclient.PermissionAllowOnce},
		{OptionID: "weird", Kind: "allow_sometimes"},
	}
	if c := chooseOption(opts, acpclient.PermissionAllowOnce); c != (optionChoice{id: "a1"}) {
		t.Errorf("allow: %+v, want the first of two distinct allow-once options", c)
	}
	if c := chooseOption(opts, acpclient.PermissionRejectOnce); c != (optionChoice{}) {
		t.Errorf("reject: %+v, want none", c)
	}
	req := newPermissionRequest("p", nil, append(opts, acpclient.PermissionOption{OptionID: "a2", Kind: acpclient.PermissionRejectOnce}),
		func(*acpclient.RequestPermissionResponse) {})
	if req.CanAllow() {
		t.Error("CanAllow with an allow-once id shared by a reject")
	}
	if err := req.Allow(); !errors.Is(err, ErrAmbiguousOption) {
		t.Errorf("Allow: %v", err)
	}
	if err := req.Reject(); !errors.Is(err, ErrAlreadyAnswered) {
		t.Errorf("Reject after the cancel: %v", err)
	}
}
