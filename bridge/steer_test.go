package bridge

import (
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/acptest"
	"github.com/acphost/acphost/internal/fakeclock"
	"github.com/acphost/acphost/internal/waitfor"
)

// steerTurn works until something is steered into it, then finishes.
var steerTurn = acptest.Turn{Match: "work", Steps: []acptest.Step{{Text: "working"}, {WaitSteer: true}, {Text: "done"}}}

// steerSession opens a session on a fake agent that steers by wire (""
// for none); provider, when set, is the bridge's Provider.
func steerSession(t *testing.T, steering acptest.SteeringScript, provider *Provider) (*Session, *recorder, *acptest.Transport) {
	t.Helper()
	tr := &acptest.Transport{Script: acptest.Script{Steering: steering, Prompts: []acptest.Turn{steerTurn, holdTurn}}}
	h, rec := newHostAndRecorder(t, nil)
	b, err := h.Start(ctxT(t), Config{ID: "st", Transport: tr, Provider: provider})
	if err != nil {
		t.Fatal(err)
	}
	s, err := b.OpenSession(ctxT(t), SessionConfig{Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	return s, rec, tr
}

// promptAsync runs Prompt(text) on its own goroutine and waits for the
// turn's first output, want.
func promptAsync(t *testing.T, s *Session, rec *recorder, text, want string) <-chan error {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		_, err := s.Prompt(ctxT(t), acpclient.TextBlock(text))
		done <- err
	}()
	rec.waitFor("the turn's output "+want, func(ev Event) bool { return ev.Kind == KindText && ev.Text == want })
	return done
}

// followUpProvider steers through session/follow_up, as a profile with a
// vendor method does.
func followUpProvider() *Provider {
	return &Provider{Name: "fu", SteerRequest: func(sessionID, text string) (string, any, error) {
		return "session/follow_up", map[string]string{"sessionId": sessionID, "message": text}, nil
	}}
}

// Each wire form: the session says how it steers before a turn, Steer puts
// the text into the running turn by it (the agent takes it and goes on),
// and a user_text event marked with the way carries the turn it joined.
func TestSteerEachWireForm(t *testing.T) {
	for _, tc := range []struct {
		wire     string
		provider *Provider
		via      SteerVia
		method   string
		params   string
	}{
		{acptest.SteerWireInject, nil, SteerInject, "session/inject",
			`{"sessionId":"sess_1","mode":"steer","content":[{"type":"text","text":"use the v2 API"}]}`},
		{acptest.SteerWireExtension, nil, SteerExtension, "_session/steering",
			`{"_meta":{"steering":{"idleBehavior":"promptRequired"}},"prompt":[{"type":"text","text":"use the v2 API"}],"sessionId":"sess_1"}`},
		{acptest.SteerWireFollowUp, followUpProvider(), SteerProvider, "session/follow_up",
			`{"message":"use the v2 API","sessionId":"sess_1"}`},
	} {
		t.Run(tc.wire, func(t *testing.T) {
			s, rec, tr := steerSession(t, acptest.SteeringScript{Wire: tc.wire}, tc.provider)
			if got := s.SteerMode(); got != tc.via {
				t.Errorf("SteerMode() = %q before any turn, want %q", got, tc.via)
			}
			done := promptAsync(t, s, rec, "work", "working")
			via, err := s.Steer(ctxT(t), "use the v2 API", "")
			if err != nil || via != tc.via {
				t.Fatalf("Steer = %q, %v; want %q", via, err, tc.via)
			}
			if err := waitfor.Recv(t, done, "the steered turn to end"); err != nil {
				t.Fatal(err)
			}
			rec.waitFor("turn_end", func(ev Event) bool { return ev.Kind == KindTurnEnd })
			var steered []Event
			for _, ev := range rec.snapshot() {
				if ev.Kind == KindUserText && ev.Steer != "" {
					steered = append(steered, ev)
				}
			}
			if len(steered) != 1 || steered[0].Text != "use the v2 API" || steered[0].Steer != tc.via || steered[0].Turn != 1 {
				t.Errorf("steered user_text events %+v, want one of turn 1 by %q", steered, tc.via)
			}
			got := kinds(rec.of("st", "sess_1"), KindSession, KindAuthority, KindCommands, KindConfig)
			want := []string{"turn_start:work", "text:working", "text:steered: use the v2 API", "user_text:use the v2 API", "text:done", "turn_end:end_turn"}
			if !slices.Equal(got, want) {
				t.Errorf("events %q, want %q", got, want)
			}
			sent := sentTo(tr.Agents()[0], tc.method)
			if len(sent) != 1 || !jsonEqual(t, sent[0].Params, tc.params) {
				t.Errorf("%s sent %d times, params %s; want once, %s", tc.method, len(sent), firstParams(sent), tc.params)
			}
		})
	}
}

func firstParams(ms []acptest.Message) string {
	if len(ms) == 0 {
		return "(none)"
	}
	return string(ms[0].Params)
}

func jsonEqual(t *testing.T, got json.RawMessage, want string) bool {
	t.Helper()
	var a, b any
	if err := json.Unmarshal(got, &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(want), &b); err != nil {
		t.Fatal(err)
	}
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// An agent without a way to steer: SteerMode is "", and Steer applies the
// fallback the app chose: fail with ErrUnsupported, queue the text as the
// next prompt, or cancel the turn and send it now.
func TestSteerFallbacksWithoutAWay(t *testing.T) {
	t.Run("fail", func(t *testing.T) {
		s, rec, _ := steerSession(t, acptest.SteeringScript{}, nil)
		if got := s.SteerMode(); got != "" {
			t.Errorf("SteerMode() = %q, want none", got)
		}
		done := hold(t, s, rec)
		if _, err := s.Steer(ctxT(t), "more", ""); !errors.Is(err, acpclient.ErrUnsupported) {
			t.Errorf("Steer without a fallback: %v, want ErrUnsupported", err)
		}
		if prompts, _ := s.Queue(); len(prompts) != 0 {
			t.Errorf("a failed steer queued %d prompts", len(prompts))
		}
		s.Cancel()
		waitfor.Recv(t, done, "the holding turn to end")
	})
	t.Run("queue", func(t *testing.T) {
		s, rec, _ := steerSession(t, acptest.SteeringScript{}, nil)
		done := hold(t, s, rec)
		later := mustEnqueue(t, s, "later")
		via, err := s.Steer(ctxT(t), "sooner", SteerQueue)
		if err != nil || via != SteerQueue {
			t.Fatalf("Steer = %q, %v; want queue", via, err)
		}
		prompts, _ := s.Queue()
		if len(prompts) != 2 || prompts[0].Text != "sooner" || prompts[1].ID != later {
			t.Fatalf("queue %+v, want the steered text first, then %s", prompts, later)
		}
		s.Cancel()
		waitfor.Recv(t, done, "the holding turn to end")
		rec.waitFor("the queued turns to end", func(ev Event) bool { return ev.Kind == KindTurnEnd && ev.Turn == 3 })
		if got := turnStarts(rec); !slices.Equal(got, []string{"hold", "sooner", "later"}) {
			t.Errorf("turns %q, want hold, sooner, later", got)
		}
	})
	t.Run("interrupt", func(t *testing.T) {
		s, rec, _ := steerSession(t, acptest.SteeringScript{}, nil)
		done := hold(t, s, rec)
		via, err := s.Steer(ctxT(t), "stop and do this", SteerInterrupt)
		if err != nil || via != SteerInterrupt {
			t.Fatalf("Steer = %q, %v; want interrupt", via, err)
		}
		waitfor.Recv(t, done, "the interrupted turn to end")
		rec.waitFor("the interrupting turn to end", func(ev Event) bool { return ev.Kind == KindTurnEnd && ev.Turn == 2 })
		var ends []string
		for _, ev := range rec.snapshot() {
			if ev.Kind == KindTurnEnd {
				ends = append(ends, ev.StopReason)
			}
		}
		if got := turnStarts(rec); !slices.Equal(got, []string{"hold", "stop and do this"}) || !slices.Equal(ends, []string{"cancelled", "end_turn"}) {
			t.Errorf("turns %q ending %q; want hold cancelled, then the text", got, ends)
		}
	})
}

// Steering when no turn runs (one that has just ended) never loses the
// text: it fails with ErrNoTurn, or goes to the queue, which runs it.
func TestSteerIntoAnEndedTurn(t *testing.T) {
	s, rec, _ := steerSession(t, acptest.SteeringScript{Wire: acptest.SteerWireInject}, nil)
	if _, err := s.Prompt(ctxT(t), acpclient.TextBlock("quick")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Steer(ctxT(t), "too late", ""); !errors.Is(err, ErrNoTurn) {
		t.Errorf("Steer after the turn, no fallback: %v, want ErrNoTurn", err)
	}
	via, err := s.Steer(ctxT(t), "too late", SteerQueue)
	if err != nil || via != SteerQueue {
		t.Fatalf("Steer after the turn, queue fallback = %q, %v", via, err)
	}
	rec.waitFor("the text's own turn to end", func(ev Event) bool { return ev.Kind == KindTurnEnd && ev.Turn == 2 })
	if got := turnStarts(rec); !slices.Equal(got, []string{"quick", "too late"}) {
		t.Errorf("turns %q, want quick, then the steered text as a turn", got)
	}
}

// The agent says the turn has ended while the bridge still waits for its
// answer (_session/steering's promptRequired): the text goes to the queue
// and runs once the turn is over.
func TestSteerTheAgentSaysEndedGoesToTheQueue(t *testing.T) {
	clock := fakeClock{fakeclock.New()}
	tr := &acptest.Transport{Script: acptest.Script{Steering: acptest.SteeringScript{Wire: acptest.SteerWireExtension},
		Prompts: []acptest.Turn{{Match: "deaf", Steps: []acptest.Step{{Text: "stuck"}, {Hang: true}}}}}}
	h, rec := newHostAndRecorder(t, nil)
	b, err := h.Start(ctxT(t), Config{ID: "st", Transport: tr, Clock: clock, CancelGrace: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	s, err := b.OpenSession(ctxT(t), SessionConfig{Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	done := promptAsync(t, s, rec, "deaf", "stuck")
	if !clock.WaitForTimers(1, 5*time.Second) {
		t.Fatal("watchdog not armed")
	}
	armed := clock.Pending()
	s.Cancel() // the agent marks its turn over and never answers
	if !clock.WaitForTimers(armed+1, 5*time.Second) {
		t.Fatal("cancel grace not armed")
	}
	via, err := s.Steer(ctxT(t), "then this", SteerQueue)
	if err != nil || via != SteerQueue {
		t.Fatalf("Steer = %q, %v; want the queue fallback", via, err)
	}
	for _, ev := range rec.snapshot() {
		if ev.Kind == KindError {
			t.Errorf("an ended turn is no failure to report: %v", ev.Err)
		}
	}
	clock.Advance(time.Second)
	waitfor.Recv(t, done, "the turn to end after the grace")
	// The turn ended with ErrCancelIgnored: the queue holds the text,
	// paused, rather than sending it into a session whose agent was killed.
	paused := rec.waitFor("the queue to pause", func(ev Event) bool { return ev.Kind == KindQueue && ev.Queue.Change == "paused" })
	if len(paused.Queue.Prompts) != 1 || paused.Queue.Prompts[0].Text != "then this" {
		t.Errorf("paused queue %+v, want the steered text", paused.Queue.Prompts)
	}
}

// An agent that advertises steering and then fails it: Steer reports the
// failure, then applies the fallback, or returns the agent's error.
func TestSteerAgentErrorReportsThenFallsBack(t *testing.T) {
	boom := &acptest.Error{Code: -32603, Message: "steering broke"}
	s, rec, _ := steerSession(t, acptest.SteeringScript{Wire: acptest.SteerWireExtension, Error: boom}, nil)
	if s.SteerMode() != SteerExtension {
		t.Fatalf("SteerMode() = %q, want extension (it is advertised)", s.SteerMode())
	}
	done := hold(t, s, rec)
	_, err := s.Steer(ctxT(t), "first try", "")
	var ce *acpclient.CallError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "steering broke") {
		t.Errorf("Steer without a fallback: %v, want the agent's error", err)
	}
	via, err := s.Steer(ctxT(t), "second try", SteerQueue)
	if err != nil || via != SteerQueue {
		t.Fatalf("Steer with the queue fallback = %q, %v", via, err)
	}
	reported := rec.waitFor("the failure reported", func(ev Event) bool { return ev.Kind == KindError })
	if !strings.Contains(reported.Err.Error(), "steering broke") || !strings.Contains(reported.Err.Error(), "queue") || reported.Turn != 1 {
		t.Errorf("error event %v (turn %d), want the agent's error, the fallback, turn 1", reported.Err, reported.Turn)
	}
	if prompts, _ := s.Queue(); len(prompts) != 1 || prompts[0].Text != "second try" {
		t.Errorf("queue %+v, want the second try", prompts)
	}
	s.ClearQueue()
	s.Cancel()
	waitfor.Recv(t, done, "the holding turn to end")
}

// Steer checks its arguments: a fallback that is no fallback, empty text.
func TestSteerRefusesBadArguments(t *testing.T) {
	s, _, _ := steerSession(t, acptest.SteeringScript{Wire: acptest.SteerWireInject}, nil)
	if _, err := s.Steer(ctxT(t), "x", SteerInject); err == nil {
		t.Error("a way to steer accepted as a fallback")
	}
	if _, err := s.Steer(ctxT(t), "", SteerQueue); err == nil {
		t.Error("empty text accepted")
	}
}

// Text steered as soon as turn_start is seen joins that turn: the steer
// request never reaches the agent before the turn's prompt does (the agent
// would answer that no turn runs, and the text would go to the fallback).
// The window is the moment between turn_start and the prompt's write, so
// the test steers into many turns the moment each starts.
func TestSteerRightAfterTurnStartJoinsTheTurn(t *testing.T) {
	s, rec, tr := steerSession(t, acptest.SteeringScript{Wire: acptest.SteerWireInject}, nil)
	const turns = 100
	for n := 1; n <= turns; n++ {
		done := make(chan error, 1)
		go func() {
			_, err := s.Prompt(ctxT(t), acpclient.TextBlock("work"))
			done <- err
		}()
		rec.waitFor("turn_start of turn "+strconv.Itoa(n), func(ev Event) bool { return ev.Kind == KindTurnStart && ev.Turn == uint64(n) })
		via, err := s.Steer(ctxT(t), "go on", SteerQueue)
		if err != nil || via != SteerInject {
			t.Fatalf("turn %d: Steer right after turn_start = %q, %v; want %q (the agent got, last: %s)", n, via, err, SteerInject, methodsSent(tr))
		}
		if err := waitfor.Recv(t, done, "turn "+strconv.Itoa(n)+" to end"); err != nil {
			t.Fatal(err)
		}
	}
}

// methodsSent lists the last methods the agent received, in order.
func methodsSent(tr *acptest.Transport) string {
	var ms []string
	for _, m := range tr.Agents()[0].Received() {
		ms = append(ms, m.Method)
	}
	return strings.Join(ms[max(0, len(ms)-4):], " ")
}

// A Cancel as soon as turn_start is seen cancels that turn: it finds the
// turn, and session/cancel reaches the agent after the prompt it cancels
// (before it, the agent would cancel nothing and run the turn through).
func TestCancelRightAfterTurnStartCancelsTheTurn(t *testing.T) {
	s, rec, _ := steerSession(t, acptest.SteeringScript{}, nil)
	const turns = 100
	for n := 1; n <= turns; n++ {
		done := make(chan error, 1)
		var stop string
		go func() {
			var err error
			stop, err = s.Prompt(ctxT(t), acpclient.TextBlock("hold"))
			done <- err
		}()
		rec.waitFor("turn_start of turn "+strconv.Itoa(n), func(ev Event) bool { return ev.Kind == KindTurnStart && ev.Turn == uint64(n) })
		s.Cancel()
		if err := waitfor.Recv(t, done, "turn "+strconv.Itoa(n)+", cancelled right after its turn_start, to end"); err != nil {
			t.Fatal(err)
		}
		if stop != "cancelled" {
			t.Fatalf("turn %d cancelled right after turn_start ended %q", n, stop)
		}
	}
}
