package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/acphost/acphost/acptest"
	"github.com/acphost/acphost/bridge"
)

// steerScript is an agent that steers over the wire form given ("": none)
// and forks when fork is set; its "hold" turn waits for steered text (or a
// cancel), its "break" turn too and then refuses; every other turn
// answers at once ("again" first, whatever else the prompt holds).
func steerScript(wire string, fork bool) acptest.Script {
	sc := acptest.Script{
		QuietReports: true,
		Steering:     acptest.SteeringScript{Wire: wire},
		Prompts: []acptest.Turn{
			{Match: "again", Steps: []acptest.Step{{Text: "Answered again"}}},
			{Match: "break", Steps: []acptest.Step{{Text: "Breaking"}, {WaitSteer: true}}, StopReason: "refusal"},
			{Match: "hold", Steps: []acptest.Step{{Text: "Holding"}, {WaitSteer: true}, {Text: "Let go"}}},
			{Steps: []acptest.Step{{Text: "Answered"}}},
		},
	}
	if fork {
		sc.Initialize.AgentCapabilities = json.RawMessage(`{"loadSession":true,"sessionCapabilities":{"list":{},"resume":{},"close":{},"fork":{}}}`)
	}
	return sc
}

// queueOf decodes the queue an API call answers with.
type queueAnswer struct {
	Queue  []bridge.QueuedPrompt `json:"queue"`
	Paused bool                  `json:"paused"`
}

func texts(q []bridge.QueuedPrompt) string {
	var out []string
	for _, p := range q {
		out = append(out, p.Text)
	}
	return strings.Join(out, ",")
}

// TestQueueAPI: prompts sent while a turn runs are queued, listed in the
// session's state, moved, removed and cleared; each change is a queue
// event on the stream; the queued prompts run in order once the turn ends.
func TestQueueAPI(t *testing.T) {
	ts := startServer(t, fakeAgent(t, "fake", steerScript("", false)))
	key := ts.newSession(t, "fake")
	live := ts.stream(t, "?key="+key, nil)
	base := "/api/sessions/" + key
	ts.call(t, "POST", base+"/prompt", map[string]string{"text": "hold on"}, http.StatusAccepted, nil)
	live.until(t, kind(bridge.KindTurnStart))

	ids := map[string]string{}
	for _, text := range []string{"one", "two", "three"} {
		var got struct{ ID string }
		ts.call(t, "POST", base+"/queue", map[string]string{"text": text}, http.StatusAccepted, &got)
		if got.ID == "" {
			t.Fatalf("queueing %q: no id", text)
		}
		ids[text] = got.ID
		if ev := live.until(t, kind(bridge.KindQueue)); ev.Queue.Change != "queued" || ev.Queue.ID != got.ID {
			t.Fatalf("queue event %+v, want %s queued", ev.Queue, got.ID)
		}
	}
	// The session's state has the queue (from the Host's view, which
	// follows the events).
	var st sessionItem
	ts.waitFor(t, func() bool {
		st = sessionItem{}
		ts.call(t, "GET", base, nil, http.StatusOK, &st)
		return texts(st.Queue) == "one,two,three" && !st.QueuePaused
	})

	var q queueAnswer
	ts.call(t, "POST", base+"/queue/move", map[string]any{"id": ids["three"], "index": 0}, http.StatusOK, &q)
	if texts(q.Queue) != "three,one,two" {
		t.Fatalf("after moving three first: %q", texts(q.Queue))
	}
	if ev := live.until(t, kind(bridge.KindQueue)); ev.Queue.Change != "moved" || texts(ev.Queue.Prompts) != "three,one,two" {
		t.Fatalf("move event %+v", ev.Queue)
	}
	ts.call(t, "POST", base+"/queue/remove", map[string]string{"id": ids["one"]}, http.StatusOK, &q)
	if texts(q.Queue) != "three,two" {
		t.Fatalf("after removing one: %q", texts(q.Queue))
	}
	// Refusals: no such prompt, a negative index, an empty prompt, a
	// field the call does not take.
	ts.call(t, "POST", base+"/queue/remove", map[string]string{"id": ids["one"]}, http.StatusNotFound, nil)
	ts.call(t, "POST", base+"/queue/move", map[string]any{"id": ids["two"], "index": -1}, http.StatusBadRequest, nil)
	ts.call(t, "POST", base+"/queue", map[string]string{"text": "  "}, http.StatusBadRequest, nil)
	ts.call(t, "POST", base+"/queue", map[string]any{"text": "x", "argv": []string{"sh"}}, http.StatusBadRequest, nil)
	ts.call(t, "POST", "/api/sessions/nope/queue", map[string]string{"text": "x"}, http.StatusConflict, nil)

	// Cancel keeps the queue: its prompts run, in order, as turns.
	ts.call(t, "POST", base+"/cancel", struct{}{}, http.StatusAccepted, nil)
	var started []string
	for len(started) < 2 {
		ev := live.until(t, kind(bridge.KindTurnStart))
		started = append(started, ev.Text)
	}
	if strings.Join(started, ",") != "three,two" {
		t.Fatalf("the queued turns ran as %q, want three,two", started)
	}
	live.until(t, func(ev bridge.Event) bool { return ev.Kind == bridge.KindTurnEnd && ev.Text == "" && ev.Turn == 3 })

	// Clear drops what waits.
	ts.call(t, "POST", base+"/prompt", map[string]string{"text": "hold once more"}, http.StatusAccepted, nil)
	live.until(t, kind(bridge.KindTurnStart))
	ts.call(t, "POST", base+"/queue", map[string]string{"text": "four"}, http.StatusAccepted, nil)
	ts.call(t, "POST", base+"/queue/clear", struct{}{}, http.StatusOK, &q)
	if len(q.Queue) != 0 {
		t.Fatalf("after clear: %q", texts(q.Queue))
	}
	if ev := live.until(t, func(ev bridge.Event) bool { return ev.Kind == bridge.KindQueue && ev.Queue.Change == "cleared" }); len(ev.Queue.Prompts) != 0 {
		t.Fatalf("clear event %+v", ev.Queue)
	}
	// Resume of a queue that is not paused is harmless; of a closed
	// session, refused.
	ts.call(t, "POST", base+"/queue/resume", struct{}{}, http.StatusOK, nil)
	ts.call(t, "POST", base+"/cancel", struct{}{}, http.StatusAccepted, nil)
	live.until(t, kind(bridge.KindTurnEnd))
	ts.call(t, "POST", base+"/close", struct{}{}, http.StatusOK, nil)
	ts.call(t, "POST", base+"/queue/resume", struct{}{}, http.StatusConflict, nil)
}

// TestTurnCallsAreGuarded: the queue, steer and fork calls change a
// session, so the guard holds them to the page's own origin, a JSON body
// of bounded size and the token, before any of them runs.
func TestTurnCallsAreGuarded(t *testing.T) {
	ts := startServer(t, fakeAgent(t, "fake", steerScript("", true)))
	key := ts.newSession(t, "fake")
	big := `{"text":"` + strings.Repeat("x", maxBody) + `"}`
	for _, action := range []string{"queue", "queue/move", "queue/remove", "queue/clear", "queue/resume", "steer", "fork"} {
		path := ts.base + "/api/sessions/" + key + "/" + action
		for _, c := range []struct {
			name, origin, contentType, token, body string
			want                                   int
		}{
			{"another origin", "http://evil.example", "application/json", ts.token, `{}`, http.StatusForbidden},
			{"a form", "", "application/x-www-form-urlencoded", ts.token, `text=hi`, http.StatusUnsupportedMediaType},
			{"no token", "", "application/json", "", `{}`, http.StatusUnauthorized},
			{"a wrong token", "", "application/json", "wrong", `{}`, http.StatusForbidden},
			{"an oversize body", "", "application/json", ts.token, big, http.StatusRequestEntityTooLarge},
		} {
			req, _ := http.NewRequest("POST", path, strings.NewReader(c.body))
			req.Header.Set("Content-Type", c.contentType)
			if c.token != "" {
				req.Header.Set("Authorization", "Bearer "+c.token)
			}
			if c.origin != "" {
				req.Header.Set("Origin", c.origin)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != c.want {
				t.Errorf("%s with %s: %d, want %d", action, c.name, resp.StatusCode, c.want)
			}
		}
	}
	// Nothing of it ran: no queue, no fork.
	var list struct{ Sessions []sessionItem }
	ts.call(t, "GET", "/api/sessions", nil, http.StatusOK, &list)
	if len(list.Sessions) != 1 {
		t.Fatalf("sessions after refused calls: %+v", list.Sessions)
	}
	var st sessionItem
	ts.call(t, "GET", "/api/sessions/"+key, nil, http.StatusOK, &st)
	if len(st.Queue) != 0 {
		t.Fatalf("queue after refused calls: %q", texts(st.Queue))
	}
}

// TestQueuePausesAndResumes: a turn the agent refuses pauses the queue
// (the state says so) instead of sending the next prompt; resume runs it.
func TestQueuePausesAndResumes(t *testing.T) {
	ts := startServer(t, fakeAgent(t, "fake", steerScript(acptest.SteerWireInject, false)))
	key := ts.newSession(t, "fake")
	base := "/api/sessions/" + key
	live := ts.stream(t, "?key="+key, nil)
	ts.call(t, "POST", base+"/prompt", map[string]string{"text": "break it"}, http.StatusAccepted, nil)
	live.until(t, kind(bridge.KindTurnStart))
	var got struct{ ID string }
	ts.call(t, "POST", base+"/queue", map[string]string{"text": "after the pause"}, http.StatusAccepted, &got)
	ts.call(t, "POST", base+"/steer", map[string]string{"text": "go"}, http.StatusOK, nil)
	if ev := live.until(t, func(ev bridge.Event) bool { return ev.Kind == bridge.KindQueue && ev.Queue.Change == "paused" }); !ev.Queue.Paused || texts(ev.Queue.Prompts) != "after the pause" {
		t.Fatalf("paused event %+v", ev.Queue)
	}
	var st sessionItem
	ts.waitFor(t, func() bool {
		st = sessionItem{}
		ts.call(t, "GET", base, nil, http.StatusOK, &st)
		return st.QueuePaused
	})
	if texts(st.Queue) != "after the pause" {
		t.Fatalf("the paused queue in the state: %q", texts(st.Queue))
	}
	var q queueAnswer
	ts.call(t, "POST", base+"/queue/resume", struct{}{}, http.StatusOK, &q)
	if q.Paused {
		t.Fatalf("still paused after resume: %+v", q)
	}
	// The prompt leaves the queue (started) as its turn begins, in
	// whichever order the two events come.
	started, turn := false, false
	for !started || !turn {
		ev := live.nextEvent(t)
		switch {
		case ev.Kind == bridge.KindQueue && ev.Queue.Change == "started":
			if ev.Queue.ID != got.ID {
				t.Fatalf("started %+v, want %s", ev.Queue, got.ID)
			}
			started = true
		case ev.Kind == bridge.KindTurnStart:
			if ev.Text != "after the pause" {
				t.Fatalf("the resumed turn %q", ev.Text)
			}
			turn = true
		}
	}
}
