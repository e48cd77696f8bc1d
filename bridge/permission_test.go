package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/acptest"
	"github.com/acphost/acphost/internal/waitfor"
)

// An answer names an option by id, so an id two options share (even up to
// case and surrounding space) could be read as either, and an empty id
// could stand for one that failed to decode: such options are never
// selected, in any mode. Full never rejects on its own: without a usable
// allow-once option it cancels.
func TestAmbiguousOptionIDsCancel(t *testing.T) {
	type outcome struct {
		agentSaw string // the agent's report of the answer it got
		appErr   error  // what Allow or Reject returned (Build only)
	}
	cancelled := outcome{agentSaw: "permission: cancelled"}
	ambiguous := outcome{agentSaw: "permission: cancelled", appErr: ErrAmbiguousOption}
	noAllow := outcome{agentSaw: "permission: cancelled", appErr: ErrNoAllowOption}
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
			cancelled, ambiguous, ambiguous},
		{"reject-once without an id",
			[]acptest.PermissionOption{opt("yes", "allow_once"), opt("", "reject_once")},
			cancelled, ambiguous, ambiguous},
		// A numeric id decodes leniently to "", beside a string "1" a loose
		// agent could take for it.
		{"numeric allow id beside a string one",
			[]acptest.PermissionOption{opt("", "allow_once"), opt("1", "reject_once")},
			cancelled, ambiguous, ambiguous},
		{"ids differ only by case",
			[]acptest.PermissionOption{opt("Yes", "allow_once"), opt("yes", "reject_once")},
			cancelled, ambiguous, ambiguous},
		{"ids differ only by surrounding space",
			[]acptest.PermissionOption{opt("ok", "allow_once"), opt("ok ", "reject_once")},
			cancelled, ambiguous, ambiguous},
		{"reject folds to the allow-always id",
			[]acptest.PermissionOption{opt("yes", "allow_once"), opt("Always", "allow_always"), opt(" always", "reject_once")},
			selected("yes"), selected("yes"), ambiguous},
		{"only allow-always",
			[]acptest.PermissionOption{opt("always", "allow_always"), opt("no", "reject_once")},
			cancelled, noAllow, selected("no")},
		{"allow of an unknown kind",
			[]acptest.PermissionOption{opt("maybe", "allow_sometimes"), opt("no", "reject_once")},
			cancelled, noAllow, selected("no")},
		{"allow without a kind",
			[]acptest.PermissionOption{opt("yes", ""), opt("no", "reject_once")},
			cancelled, noAllow, selected("no")},
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
				s, err := b.OpenSession(waitfor.Context(t), SessionConfig{Cwd: "/w", Policy: mode.policy})
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
					// Answered by the policy itself, not by the app or a timeout.
					rec.waitFor("decision", func(ev Event) bool { return ev.Kind == KindDecision })
					if askedApp(rec.of(id, s.ID())) {
						t.Errorf("%s asked the app", mode.name)
					}
					return
				}
				if err := waitfor.Recv(t, appErr, "appErr"); !errors.Is(err, want.appErr) || (want.appErr == nil) != (err == nil) {
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
	folded := []acpclient.PermissionOption{
		{OptionID: "a1", Kind: acpclient.PermissionAllowOnce},
		{OptionID: " A1", Kind: acpclient.PermissionRejectOnce},
	}
	for _, kind := range []string{acpclient.PermissionAllowOnce, acpclient.PermissionRejectOnce} {
		if c := chooseOption(folded, kind); c != (optionChoice{ambiguous: true}) {
			t.Errorf("%s with ids equal up to case and space: %+v, want ambiguous", kind, c)
		}
		// An empty id anywhere, here on an option of another kind.
		withEmpty := append(append([]acpclient.PermissionOption(nil), opts...), acpclient.PermissionOption{Kind: acpclient.PermissionRejectAlways})
		if c := chooseOption(withEmpty, kind); c != (optionChoice{ambiguous: true}) {
			t.Errorf("%s beside an empty id: %+v, want ambiguous", kind, c)
		}
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

// TestOptionRuleInEveryMode decodes option lists as the wire gives them (a
// numeric id falls back to "") and checks the answer each mode sends.
func TestOptionRuleInEveryMode(t *testing.T) {
	const cancelled = "cancelled"
	tests := []struct {
		name             string
		options          string
		full             string // the automatic answer in Full
		allow, reject    string // the answers of Allow and Reject in Build
		allowErr, rejErr error
	}{
		{"numeric allow id beside a string one",
			`[{"optionId":1,"name":"Yes","kind":"allow_once"},{"optionId":"1","name":"No","kind":"reject_once"}]`,
			cancelled, cancelled, cancelled, ErrAmbiguousOption, ErrAmbiguousOption},
		{"numeric reject id beside a string one",
			`[{"optionId":"1","name":"Yes","kind":"allow_once"},{"optionId":1,"name":"No","kind":"reject_once"}]`,
			cancelled, cancelled, cancelled, ErrAmbiguousOption, ErrAmbiguousOption},
		{"ids differ only by case",
			`[{"optionId":"Yes","name":"Yes","kind":"allow_once"},{"optionId":"yes","name":"No","kind":"reject_once"}]`,
			cancelled, cancelled, cancelled, ErrAmbiguousOption, ErrAmbiguousOption},
		{"ids equal under Unicode case folding",
			"[{\"optionId\":\"\u212a\",\"name\":\"Yes\",\"kind\":\"allow_once\"},{\"optionId\":\"k\",\"name\":\"No\",\"kind\":\"reject_once\"}]",
			cancelled, cancelled, cancelled, ErrAmbiguousOption, ErrAmbiguousOption},
		{"ids differ only by surrounding space",
			`[{"optionId":"ok","name":"Yes","kind":"allow_once"},{"optionId":"ok\t","name":"No","kind":"reject_once"}]`,
			cancelled, cancelled, cancelled, ErrAmbiguousOption, ErrAmbiguousOption},
		{"blank id",
			`[{"optionId":"yes","name":"Yes","kind":"allow_once"},{"optionId":"  ","name":"No","kind":"reject_once"}]`,
			cancelled, cancelled, cancelled, ErrAmbiguousOption, ErrAmbiguousOption},
		{"only allow-always",
			`[{"optionId":"always","name":"Always","kind":"allow_always"},{"optionId":"no","name":"No","kind":"reject_once"}]`,
			cancelled, cancelled, "no", ErrNoAllowOption, nil},
		{"allow without a kind",
			`[{"optionId":"yes","name":"Yes"},{"optionId":"no","name":"No","kind":"reject_once"}]`,
			cancelled, cancelled, "no", ErrNoAllowOption, nil},
		{"distinct ids",
			`[{"optionId":"yes","name":"Yes","kind":"allow_once"},{"optionId":"no","name":"No","kind":"reject_once"}]`,
			"yes", "yes", "no", nil, nil},
	}
	outcome := func(r *acpclient.RequestPermissionResponse) string {
		if r == nil {
			return "asks the app"
		}
		if r.Outcome.Outcome == "selected" {
			return r.Outcome.OptionID
		}
		return r.Outcome.Outcome
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var options []acpclient.PermissionOption
			// encoding/json decodes on past a field of the wrong type,
			// leaving it "", as the client's lenient decoder does.
			if err := json.Unmarshal([]byte(tt.options), &options); err != nil && !errors.As(err, new(*json.UnmarshalTypeError)) {
				t.Fatal(err)
			}
			for _, mode := range []Mode{ModeAsk, ModePlan} {
				if got := outcome(first((Policy{Mode: mode}).permissionAnswer(options))); got != cancelled {
					t.Errorf("%s: %s, want cancelled", mode, got)
				}
			}
			if got := outcome(first((Policy{Mode: ModeFull}).permissionAnswer(options))); got != tt.full {
				t.Errorf("full: %s, want %s", got, tt.full)
			}
			if got := first((Policy{Mode: ModeBuild}).permissionAnswer(options)); got != nil {
				t.Errorf("build answered %s without the app", outcome(got))
			}
			build := func(answer func(*PermissionRequest) error, want string, wantErr error, what string) {
				var sent *acpclient.RequestPermissionResponse
				req := newPermissionRequest("p", nil, options, func(r *acpclient.RequestPermissionResponse) { sent = r })
				if req.CanAllow() != (tt.allowErr == nil) {
					t.Errorf("CanAllow = %v, but Allow returns %v", req.CanAllow(), tt.allowErr)
				}
				err := answer(req)
				if got := outcome(sent); got != want || !errors.Is(err, wantErr) || (wantErr == nil) != (err == nil) {
					t.Errorf("%s: %s, %v; want %s, %v", what, got, err, want, wantErr)
				}
			}
			build((*PermissionRequest).Allow, tt.allow, tt.allowErr, "allow")
			build((*PermissionRequest).Reject, tt.reject, tt.rejErr, "reject")
		})
	}
}

// first is the answer of Policy.permissionAnswer, without the rule's name.
func first(resp *acpclient.RequestPermissionResponse, _ string) *acpclient.RequestPermissionResponse {
	return resp
}
