package main

import (
	"net/http"
	"strings"
	"testing"

	"github.com/acphost/acphost/acptest"
	"github.com/acphost/acphost/bridge"
)

// TestSteerAPI: the session's state says how it steers; steered text
// reaches the running turn as a user_text event marked steer; an agent
// without a way applies the fallback the page chose, or fails plainly.
func TestSteerAPI(t *testing.T) {
	ts := startServer(t, fakeAgent(t, "steers", steerScript(acptest.SteerWireInject, false)), fakeAgent(t, "plain", steerScript("", false)))

	key := ts.newSession(t, "steers")
	base := "/api/sessions/" + key
	var st sessionItem
	ts.call(t, "GET", base, nil, http.StatusOK, &st)
	if st.SteerMode != bridge.SteerInject {
		t.Fatalf("steer mode %q, want inject", st.SteerMode)
	}
	live := ts.stream(t, "?key="+key, nil)
	// No turn runs and no fallback: refused, not lost.
	ts.call(t, "POST", base+"/steer", map[string]string{"text": "too early"}, http.StatusConflict, nil)
	ts.call(t, "POST", base+"/steer", map[string]string{"text": "x", "fallback": "later"}, http.StatusBadRequest, nil)
	ts.call(t, "POST", base+"/prompt", map[string]string{"text": "hold on"}, http.StatusAccepted, nil)
	live.until(t, kind(bridge.KindTurnStart))
	var got struct{ Via string }
	ts.call(t, "POST", base+"/steer", map[string]string{"text": "use tabs", "fallback": "queue"}, http.StatusOK, &got)
	if got.Via != string(bridge.SteerInject) {
		t.Fatalf("steered via %q, want inject", got.Via)
	}
	ev := live.until(t, kind(bridge.KindUserText))
	if ev.Steer != bridge.SteerInject || ev.Text != "use tabs" || ev.Turn != 1 {
		t.Fatalf("steered text event %+v", ev)
	}
	live.until(t, kind(bridge.KindTurnEnd))

	plain := ts.newSession(t, "plain")
	pbase := "/api/sessions/" + plain
	st = sessionItem{}
	ts.call(t, "GET", pbase, nil, http.StatusOK, &st)
	if st.SteerMode != "" {
		t.Fatalf("steer mode of an agent without steering %q", st.SteerMode)
	}
	plive := ts.stream(t, "?key="+plain, nil)
	ts.call(t, "POST", pbase+"/prompt", map[string]string{"text": "hold on"}, http.StatusAccepted, nil)
	plive.until(t, kind(bridge.KindTurnStart))
	ts.call(t, "POST", pbase+"/steer", map[string]string{"text": "no way"}, http.StatusNotImplemented, nil)
	ts.call(t, "POST", pbase+"/steer", map[string]string{"text": "then next", "fallback": "queue"}, http.StatusOK, &got)
	if got.Via != string(bridge.SteerQueue) {
		t.Fatalf("fallback applied %q, want queue", got.Via)
	}
	if ev := plive.until(t, kind(bridge.KindQueue)); ev.Queue.Change != "queued" || texts(ev.Queue.Prompts) != "then next" {
		t.Fatalf("queue after the queue fallback: %+v", ev.Queue)
	}
	ts.call(t, "POST", pbase+"/steer", map[string]string{"text": "right now", "fallback": "interrupt"}, http.StatusOK, &got)
	if got.Via != string(bridge.SteerInterrupt) {
		t.Fatalf("fallback applied %q, want interrupt", got.Via)
	}
	if end := plive.until(t, kind(bridge.KindTurnEnd)); end.StopReason != "cancelled" {
		t.Fatalf("the interrupted turn ended %+v", end)
	}
	if next := plive.until(t, kind(bridge.KindTurnStart)); next.Text != "right now" {
		t.Fatalf("after the interrupt the turn %q ran, want the steered text", next.Text)
	}
}

// TestForkAPI: the state says what the session can fork; a fork at the
// end is listed under its parent; a rewind to a past turn is refused where
// the agent cannot make it, and made as a transcript fork only when asked,
// marked so in the list.
func TestForkAPI(t *testing.T) {
	ts := startServer(t, fakeAgent(t, "forks", steerScript("", true)), fakeAgent(t, "plain", steerScript("", false)))
	key := ts.newSession(t, "forks")
	base := "/api/sessions/" + key
	live := ts.stream(t, "?key="+key, nil)
	for _, text := range []string{"first", "second"} {
		ts.call(t, "POST", base+"/prompt", map[string]string{"text": text}, http.StatusAccepted, nil)
		live.until(t, kind(bridge.KindTurnEnd))
	}
	var st sessionItem
	ts.waitFor(t, func() bool {
		ts.call(t, "GET", base, nil, http.StatusOK, &st)
		return st.Turns == 2 && !st.Busy
	})
	// Fork waits for no turn: the last one's Prompt call has returned.
	ts.waitFor(t, func() bool { sess, err := ts.openSession(key); return err == nil && !sess.Busy() })
	if st.Forks == nil || !st.Forks.CanFork || !st.Forks.Transcript {
		t.Fatalf("fork checks of a forking agent: %+v", st.Forks)
	}
	// ACP forks at the end only: no past turn can be rewound natively,
	// and the state says why.
	if len(st.Forks.Rewind) != 0 || !strings.Contains(st.Forks.RewindWhy, "can fork only at the end") {
		t.Fatalf("rewind checks: %+v", st.Forks)
	}
	ts.call(t, "POST", base+"/fork", map[string]any{"beforeTurn": 2}, http.StatusNotImplemented, nil)

	var fork struct{ Key string }
	ts.call(t, "POST", base+"/fork", struct{}{}, http.StatusOK, &fork)
	var tr struct{ Key string }
	ts.call(t, "POST", base+"/fork", map[string]any{"beforeTurn": 2, "transcript": true}, http.StatusOK, &tr)
	var list struct{ Sessions []sessionItem }
	ts.call(t, "GET", "/api/sessions", nil, http.StatusOK, &list)
	byKey := map[string]sessionItem{}
	for _, it := range list.Sessions {
		byKey[it.Key] = it
	}
	if f := byKey[fork.Key].Fork; f == nil || f.Parent != key || f.AfterTurn != 2 || f.Transcript {
		t.Fatalf("the fork's origin in the list: %+v", f)
	}
	if f := byKey[tr.Key].Fork; f == nil || f.Parent != key || f.AfterTurn != 1 || !f.Transcript {
		t.Fatalf("the transcript fork's origin in the list: %+v", f)
	}
	if byKey[key].Fork != nil {
		t.Fatalf("the parent listed as a fork: %+v", byKey[key].Fork)
	}
	// The fork runs turns of its own, numbered on from the parent's.
	flive := ts.stream(t, "?key="+fork.Key, nil)
	ts.call(t, "POST", "/api/sessions/"+fork.Key+"/prompt", map[string]string{"text": "third"}, http.StatusAccepted, nil)
	if ev := flive.until(t, func(ev bridge.Event) bool { return ev.Kind == bridge.KindTurnStart && ev.Key == fork.Key }); ev.Turn != 3 || ev.Text != "third" {
		t.Fatalf("the fork's first turn is numbered %d, want 3", ev.Turn)
	}

	// An agent without session/fork: nothing to offer but the transcript.
	plain := ts.newSession(t, "plain")
	st = sessionItem{}
	ts.call(t, "GET", "/api/sessions/"+plain, nil, http.StatusOK, &st)
	if st.Forks == nil || st.Forks.CanFork || !strings.Contains(st.Forks.ForkWhy, "session/fork") {
		t.Fatalf("fork checks of an agent without fork: %+v", st.Forks)
	}
	ts.call(t, "POST", "/api/sessions/"+plain+"/fork", struct{}{}, http.StatusNotImplemented, nil)
	ts.call(t, "POST", "/api/sessions/"+plain+"/fork", map[string]any{"transcript": true, "beforeTurn": 9}, http.StatusBadGateway, nil)
}
