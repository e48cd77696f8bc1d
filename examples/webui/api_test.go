package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/acphost/acphost/acptest"
	"github.com/acphost/acphost/bridge"
	"github.com/acphost/acphost/examples/internal/demoagent"
	"github.com/acphost/acphost/internal/reaper"
	"github.com/acphost/acphost/journal"
)

// TestNoCommandLineFromThePage checks that the page can start sessions of
// the configured agents only: a command line sent as the agent's name, or
// beside it, runs nothing.
func TestNoCommandLineFromThePage(t *testing.T) {
	ts := startServer(t)
	marker := filepath.Join(t.TempDir(), "ran")
	for _, body := range []any{
		map[string]string{"agent": "touch " + marker},
		map[string]string{"agent": "sh -c 'touch " + marker + "'"},
		map[string]any{"agent": "demo", "command": "touch " + marker},
		map[string]any{"agent": "demo", "argv": []string{"touch", marker}},
		map[string]string{"agent": "5"},
	} {
		resp := ts.do(t, "POST", "/api/sessions", body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound && resp.StatusCode != http.StatusBadRequest {
			t.Errorf("POST /api/sessions %v: %d, want 404 or 400", body, resp.StatusCode)
		}
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("a command sent by the page ran")
	}
	if pids := processesWith(t, marker); len(pids) > 0 {
		t.Fatalf("processes started with the page's command: %v", pids)
	}
	if list, _ := ts.host.Sessions(context.Background()); len(list) != 0 {
		t.Fatalf("refused requests opened sessions: %+v", list)
	}
	// By name and by index, the configured agent starts.
	ts.newSession(t, "demo")
	ts.newSession(t, "0")
}

// processesWith lists the processes whose command line mentions s.
func processesWith(t *testing.T, s string) []string {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	var pids []string
	for _, e := range entries {
		cmd, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		// An agent's reaper (Linux) carries its command line too; it is not the agent.
		if err == nil && strings.Contains(string(cmd), s) && !strings.HasPrefix(string(cmd), reaper.Arg0+"\x00") {
			pids = append(pids, e.Name())
		}
	}
	return pids
}

// TestStreamFramesAndReplays runs a demo turn and checks the event stream:
// a ready event, then one frame per event whose id is its Pos and whose
// data is its JSON; a reconnect with Last-Event-ID (or a first connect with
// ?after=) replays exactly what came after it, from the journal too.
func TestStreamFramesAndReplays(t *testing.T) {
	ts := startServer(t)
	key := ts.newSession(t, "demo")
	live := ts.stream(t, "?key="+key, nil)
	if f := live.next(t); f.Event != "ready" || f.Retry == "" || f.Data != `{"after":0}` {
		t.Fatalf("first frame %+v, want the ready event with a retry", f)
	}
	ts.call(t, "POST", "/api/sessions/"+key+"/prompt", map[string]string{"text": "write the file"}, http.StatusAccepted, nil)
	perm := live.until(t, kind(bridge.KindPermission))
	if perm.Key != key || perm.Permission == nil {
		t.Fatalf("permission event %+v", perm)
	}
	ts.call(t, "POST", "/api/sessions/"+key+"/permission", map[string]string{"id": perm.Permission.ID, "answer": "allow"}, http.StatusOK, nil)
	end := live.until(t, kind(bridge.KindTurnEnd))
	if end.StopReason != "end_turn" {
		t.Fatalf("turn ended %+v", end)
	}
	if data, err := os.ReadFile(filepath.Join(ts.cwd, demoagent.FileName)); err != nil || !strings.Contains(string(data), "demo agent") {
		t.Fatalf("the allowed write: %q, %v", data, err)
	}

	// A second answer to the same request is refused.
	resp := ts.do(t, "POST", "/api/sessions/"+key+"/permission", map[string]string{"id": perm.Permission.ID, "answer": "reject"})
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound && resp.StatusCode != http.StatusConflict {
		t.Errorf("second answer: %d, want 404 or 409", resp.StatusCode)
	}

	for _, c := range []struct {
		name, query string
		header      http.Header
	}{
		{"Last-Event-ID", "?key=" + key, http.Header{"Last-Event-ID": {itoa(perm.Pos)}}},
		{"after", "?key=" + key + "&after=" + itoa(perm.Pos), nil},
		{"Last-Event-ID wins over after", "?key=" + key + "&after=1", http.Header{"Last-Event-ID": {itoa(perm.Pos)}}},
	} {
		s := ts.stream(t, c.query, c.header)
		if f := s.next(t); f.Event != "ready" {
			t.Fatalf("%s: first frame %+v", c.name, f)
		}
		ev := s.nextEvent(t)
		if ev.Pos != perm.Pos+1 || ev.Key != key {
			t.Fatalf("%s: replay starts at pos %d (key %s), want %d", c.name, ev.Pos, ev.Key, perm.Pos+1)
		}
		last := s.until(t, kind(bridge.KindTurnEnd))
		if last.Pos != end.Pos {
			t.Fatalf("%s: replay's turn_end at %d, want %d", c.name, last.Pos, end.Pos)
		}
		s.close()
	}
	for _, bad := range []string{"?after=x", "?after=-1"} {
		resp := ts.do(t, "GET", "/api/events"+bad, nil)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("GET /api/events%s: %d, want 400", bad, resp.StatusCode)
		}
	}
}

func itoa(n uint64) string { return strconv.FormatUint(n, 10) }

// TestRejectAndAskRefuse checks the two refusals through the API: Reject
// refuses the write, and in Ask mode the policy refuses it without asking.
func TestRejectAndAskRefuse(t *testing.T) {
	ts := startServer(t)
	key := ts.newSession(t, "demo")
	s := ts.stream(t, "?key="+key, nil)
	ts.call(t, "POST", "/api/sessions/"+key+"/prompt", map[string]string{"text": "one"}, http.StatusAccepted, nil)
	perm := s.until(t, kind(bridge.KindPermission))
	ts.call(t, "POST", "/api/sessions/"+key+"/permission", map[string]string{"id": perm.Permission.ID, "answer": "reject"}, http.StatusOK, nil)
	if d := s.until(t, kind(bridge.KindDecision)); d.Decision.Outcome != "rejected" || d.Decision.By != "app" {
		t.Fatalf("decision %+v, want rejected by the app", d.Decision)
	}
	s.until(t, kind(bridge.KindTurnEnd))

	var pol bridge.Policy
	ts.call(t, "POST", "/api/sessions/"+key+"/policy", map[string]string{"mode": "ask"}, http.StatusOK, &pol)
	if pol.Mode != bridge.ModeAsk {
		t.Fatalf("policy %+v", pol)
	}
	ts.call(t, "POST", "/api/sessions/"+key+"/prompt", map[string]string{"text": "two"}, http.StatusAccepted, nil)
	if d := s.until(t, kind(bridge.KindDecision)); d.Decision.Outcome != "cancelled" || d.Decision.By != "policy" {
		t.Fatalf("decision %+v, want cancelled by the policy", d.Decision)
	}
	s.until(t, kind(bridge.KindTurnEnd))
	if _, err := os.Stat(filepath.Join(ts.cwd, demoagent.FileName)); err == nil {
		t.Fatal("a refused write reached the disk")
	}
	var st sessionItem
	ts.call(t, "GET", "/api/sessions/"+key, nil, http.StatusOK, &st)
	if !st.Open || st.Policy.Mode != bridge.ModeAsk || st.Turns != 2 {
		t.Fatalf("session state %+v", st)
	}
	// Only the four modes are taken: an unknown one is not Build.
	ts.call(t, "POST", "/api/sessions/"+key+"/policy", map[string]string{"mode": "yolo"}, http.StatusBadRequest, nil)
	ts.call(t, "POST", "/api/sessions/nokey/prompt", map[string]string{"text": "x"}, http.StatusConflict, nil)
}

// TestInspectorShowsTheWire runs a real agent process and checks that its
// inspector holds the initialize exchange, the wire trace and its stderr.
func TestInspectorShowsTheWire(t *testing.T) {
	ts := startServer(t, fakeAgent(t, "fake", acptest.Script{
		Initialize: acptest.InitializeScript{Steps: []acptest.Step{{Stderr: "fake agent warming up"}}},
	}))
	var agents struct{ Agents []agentStatus }
	ts.call(t, "GET", "/api/agents", nil, http.StatusOK, &agents)
	if len(agents.Agents) != 1 || agents.Agents[0].State != "running" || agents.Agents[0].Initialize == nil {
		t.Fatalf("agents %+v", agents.Agents)
	}
	var in inspection
	ts.waitFor(t, func() bool {
		ts.call(t, "GET", "/api/agents/fake/inspector", nil, http.StatusOK, &in)
		return len(in.Stderr) > 0
	})
	if !strings.Contains(in.InitializeRequest, `"clientInfo"`) || in.Initialize == nil || in.Initialize.AgentInfo == nil {
		t.Fatalf("initialize exchange: %q, %+v", in.InitializeRequest, in.Initialize)
	}
	if !strings.Contains(in.InitializeAnswer, `"agentCapabilities"`) || !strings.Contains(in.InitializeAnswer, `"id":`) {
		t.Fatalf("initialize answer %q: want the agent's line", in.InitializeAnswer)
	}
	var out, back bool
	for _, l := range in.Trace {
		out = out || l.Dir == "out" && strings.Contains(l.Line, `"method":"initialize"`)
		back = back || l.Dir == "in" && strings.Contains(l.Line, `"agentCapabilities"`)
	}
	if !out || !back {
		t.Fatalf("trace %+v: want the initialize request and its answer", in.Trace)
	}
	if in.Stderr[0] != "fake agent warming up" {
		t.Fatalf("stderr %q", in.Stderr)
	}
	ts.call(t, "GET", "/api/agents/nobody/inspector", nil, http.StatusNotFound, nil)
}

// waitFor polls cond every few ms until it holds, failing after 20s.
func (ts *testServer) waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 20s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestAgentsListedWhileStarting checks that the agent list answers while
// an agent is still starting, and says so, instead of waiting for it.
func TestAgentsListedWhileStarting(t *testing.T) {
	dir := t.TempDir()
	spec := fakeAgent(t, "slow", acptest.Script{
		Initialize: acptest.InitializeScript{Steps: []acptest.Step{{Sleep: acptest.Duration(1500 * time.Millisecond)}}},
	})
	db, err := journal.Open(context.Background(), filepath.Join(dir, "j.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	srv, err := newServer(context.Background(), serverConfig{Agents: []agentSpec{spec}, Workspace: &workspace{cwd: dir}, Journal: db})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ts := &testServer{server: srv, base: "http://" + srv.ln.Addr().String()}
	var agents struct{ Agents []agentStatus }
	ts.call(t, "GET", "/api/agents", nil, http.StatusOK, &agents)
	if agents.Agents[0].State != "starting" {
		t.Fatalf("state while starting: %+v", agents.Agents[0])
	}
	ts.waitAgents(t)
	ts.call(t, "GET", "/api/agents", nil, http.StatusOK, &agents)
	if agents.Agents[0].State != "running" || agents.Agents[0].Title != "acptest fake agent" {
		t.Fatalf("state once started: %+v", agents.Agents[0])
	}
}

// TestStreamFailureEndsIt checks that a cursor the stream cannot serve (one
// ahead of every event, as a journal that was reset leaves a tab) ends the
// stream with a failure event that says why, instead of hanging.
func TestStreamFailureEndsIt(t *testing.T) {
	ts := startServer(t)
	ts.newSession(t, "demo")
	s := ts.stream(t, "", http.Header{"Last-Event-ID": {"999999"}})
	if f := s.next(t); f.Event != "ready" {
		t.Fatalf("first frame %+v", f)
	}
	f := s.next(t)
	if f.Event != "failure" || !strings.Contains(f.Data, "ahead") {
		t.Fatalf("frame %+v, want a failure naming the cursor ahead", f)
	}
}

// A stream says when its history is done: a caughtup event after the
// replayed events, with the position read up to, before live ones.
func TestStreamSaysWhenCaughtUp(t *testing.T) {
	ts := startServer(t)
	key := ts.newSession(t, "demo")
	live := ts.stream(t, "?key="+key, nil)
	live.next(t) // ready
	ts.call(t, "POST", "/api/sessions/"+key+"/prompt", map[string]string{"text": "one"}, http.StatusAccepted, nil)
	perm := live.until(t, kind(bridge.KindPermission))
	ts.call(t, "POST", "/api/sessions/"+key+"/permission", map[string]string{"id": perm.Permission.ID, "answer": "reject"}, http.StatusOK, nil)
	end := live.until(t, kind(bridge.KindTurnEnd))

	s := ts.stream(t, "?key="+key, nil)
	var last uint64
	for {
		f := s.next(t)
		switch f.Event {
		case "ready":
			continue
		case "caughtup":
			var got struct{ Pos uint64 }
			if err := json.Unmarshal([]byte(f.Data), &got); err != nil || got.Pos < end.Pos || last < end.Pos {
				t.Fatalf("caughtup %q (%v) after the event at %d; want it after the turn's end at %d", f.Data, err, last, end.Pos)
			}
			return
		case "":
			var ev bridge.Event
			if err := json.Unmarshal([]byte(f.Data), &ev); err != nil {
				t.Fatal(err)
			}
			last = ev.Pos
		default:
			t.Fatalf("frame %+v", f)
		}
	}
}
