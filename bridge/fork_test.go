package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/acptest"
	"github.com/acphost/acphost/internal/waitfor"
)

// withFork is the fake agent's default capabilities plus session/fork.
var withFork = raw(`{"loadSession":true,"sessionCapabilities":{"list":{},"resume":{},"close":{},"fork":{}}}`)

// forkScript answers each prompt "NAME" with the text "reply NAME".
func forkScript(caps json.RawMessage, prompts ...string) acptest.Script {
	s := acptest.Script{Initialize: acptest.InitializeScript{AgentCapabilities: caps}}
	for _, p := range prompts {
		s.Prompts = append(s.Prompts, acptest.Turn{Match: p, Steps: []acptest.Step{{Text: "reply " + p}}})
	}
	return s
}

// forkHost starts a Host with j (nil: none) and one bridge on script.
func forkHost(t *testing.T, j Journal, script acptest.Script) (*Host, *Bridge, *acptest.Transport, *recorder) {
	t.Helper()
	tr := &acptest.Transport{Script: script}
	h, rec := newHostAndRecorder(t, &HostOptions{Journal: j})
	b, err := h.Start(ctxT(t), Config{ID: "f", Transport: tr})
	if err != nil {
		t.Fatal(err)
	}
	return h, b, tr, rec
}

func mustPrompt(t *testing.T, s *Session, text string) {
	t.Helper()
	if stop, err := s.Prompt(ctxT(t), acpclient.TextBlock(text)); err != nil || stop != acpclient.StopEndTurn {
		t.Fatalf("Prompt(%q) = %q, %v", text, stop, err)
	}
}

// texts returns the texts of the agent's text events in evs, in order.
func agentTexts(evs []Event) []string {
	var out []string
	for _, ev := range evs {
		if ev.Kind == KindText {
			out = append(out, ev.Text)
		}
	}
	return out
}

// Fork asks the agent to fork the session's native session, in its
// directory, and opens the result under a new key: its session event,
// Ready, record and list entry name the parent and the turn it branched
// after, its turns are numbered on from the parent's, and the parent goes
// on as before.
func TestForkOpensANewSessionFromTheAgentsFork(t *testing.T) {
	j := newLifeJournal()
	h, b, tr, rec := forkHost(t, j, forkScript(withFork, "one", "two", "three"))
	cwd := t.TempDir()
	parent, err := b.OpenSession(ctxT(t), SessionConfig{Key: "parent", Cwd: cwd, Policy: Policy{Mode: ModeBuild}})
	if err != nil {
		t.Fatal(err)
	}
	mustPrompt(t, parent, "one")
	child, err := parent.Fork(ctxT(t), ForkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if child.Key() == "parent" || child.Key() == "" || child.ID() == parent.ID() {
		t.Fatalf("fork key %q id %q, parent %q", child.Key(), child.ID(), parent.ID())
	}
	want := ForkOrigin{Parent: "parent", ParentSession: parent.ID(), AfterTurn: 1}
	forks := sentTo(tr.Agents()[0], "session/fork")
	if len(forks) != 1 {
		t.Fatalf("the agent got %d session/fork calls", len(forks))
	}
	var params acpclient.ForkSessionRequest
	if err := json.Unmarshal(forks[0].Params, &params); err != nil || params.SessionID != parent.ID() || params.Cwd != cwd {
		t.Errorf("session/fork params %s (%v), want the parent's id %s and cwd %s", forks[0].Params, err, parent.ID(), cwd)
	}
	if got := child.Ready().Fork; got == nil || *got != want {
		t.Errorf("Ready().Fork = %+v, want %+v", got, want)
	}
	ready := rec.waitFor("the fork's session event", func(ev Event) bool { return ev.Kind == KindSession && ev.Key == child.Key() })
	if ready.SessionReady.Fork == nil || *ready.SessionReady.Fork != want {
		t.Errorf("session event fork %+v, want %+v", ready.SessionReady.Fork, want)
	}
	if r, ok := j.record(child.Key()); !ok || r.Fork == nil || *r.Fork != want || r.Cwd != cwd || r.Mode != string(ModeBuild) {
		t.Errorf("journal record of the fork %+v (found %v), want fork %+v in %s under build", r, ok, want, cwd)
	}
	entries, err := h.Sessions(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		switch e.Key {
		case child.Key():
			if e.Fork == nil || *e.Fork != want {
				t.Errorf("list entry of the fork: Fork %+v, want %+v", e.Fork, want)
			}
		case "parent":
			if e.Fork != nil {
				t.Errorf("list entry of the parent: Fork %+v, want none", e.Fork)
			}
		}
	}
	mustPrompt(t, child, "two")
	turn := rec.waitFor("the fork's turn end", func(ev Event) bool { return ev.Kind == KindTurnEnd && ev.Key == child.Key() })
	if turn.Turn != 2 {
		t.Errorf("the fork's first turn is number %d, want 2 (after the parent's one)", turn.Turn)
	}
	mustPrompt(t, parent, "three")
	if turn := rec.waitFor("the parent's turn end", func(ev Event) bool {
		return ev.Kind == KindTurnEnd && ev.Key == "parent" && ev.Text == "" && ev.Turn == 2
	}); turn.Session != parent.ID() {
		t.Errorf("the parent's second turn ran on %q, want %q", turn.Session, parent.ID())
	}
}

// A fork that is closed and opened again by its key resumes its own native
// session, still linked to its parent, its turns going on.
func TestForkResumesAsItself(t *testing.T) {
	j := newLifeJournal()
	_, b, tr, _ := forkHost(t, j, forkScript(withFork, "one", "two"))
	parent, err := b.OpenSession(ctxT(t), SessionConfig{Cwd: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	mustPrompt(t, parent, "one")
	child, err := parent.Fork(ctxT(t), ForkOptions{Key: "child"})
	if err != nil {
		t.Fatal(err)
	}
	native := child.ID()
	if err := child.Close(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	again, err := b.OpenSession(ctxT(t), SessionConfig{Key: "child"})
	if err != nil {
		t.Fatal(err)
	}
	if again.ID() != native || !again.Ready().Resumed {
		t.Errorf("reopened fork on %q (ready %+v), want %s resumed", again.ID(), again.Ready(), native)
	}
	if o := again.Ready().Fork; o == nil || o.Parent != parent.Key() || o.AfterTurn != 1 {
		t.Errorf("reopened fork's origin %+v", o)
	}
	if n := len(sentTo(tr.Agents()[0], "session/fork")); n != 1 {
		t.Errorf("the agent got %d session/fork calls, want the one of the fork", n)
	}
	mustPrompt(t, again, "two")
	if r, _ := j.record("child"); r.Turns != 2 {
		t.Errorf("the resumed fork's record counts %d turns, want 2", r.Turns)
	}
}

// A fork's history, from the journal (History) and from a subscription
// (Host.Subscribe), is its parent's events up to the fork, then its own:
// what the parent does after the fork is not in it, and a fork of a fork
// shows the whole chain.
func TestForkHistoryIsTheParentsThenItsOwn(t *testing.T) {
	j := newLifeJournal()
	h, b, _, rec := forkHost(t, j, forkScript(withFork, "one", "two", "three", "four"))
	parent, err := b.OpenSession(ctxT(t), SessionConfig{Key: "p", Cwd: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	mustPrompt(t, parent, "one")
	child, err := parent.Fork(ctxT(t), ForkOptions{Key: "c"})
	if err != nil {
		t.Fatal(err)
	}
	mustPrompt(t, parent, "two") // after the fork: the parent's alone
	mustPrompt(t, child, "three")
	grandchild, err := child.Fork(ctxT(t), ForkOptions{Key: "g"})
	if err != nil {
		t.Fatal(err)
	}
	mustPrompt(t, grandchild, "four")
	rec.waitFor("the grandchild's turn end", func(ev Event) bool { return ev.Kind == KindTurnEnd && ev.Key == "g" })

	for key, want := range map[string][]string{
		"p": {"reply one", "reply two"},
		"c": {"reply one", "reply three"},
		"g": {"reply one", "reply three", "reply four"},
	} {
		var got []Event
		for ev, err := range History(ctxT(t), j, key) {
			if err != nil {
				t.Fatalf("History(%s): %v", key, err)
			}
			got = append(got, ev)
		}
		if texts := agentTexts(got); !slices.Equal(texts, want) {
			t.Errorf("History(%s) texts %q, want %q", key, texts, want)
		}
		if !slices.IsSortedFunc(got, func(a, b Event) int { return int(a.Pos) - int(b.Pos) }) {
			t.Errorf("History(%s) is not in Pos order", key)
		}
		var sub []Event
		ctx, cancel := context.WithCancel(ctxT(t))
		for ev, err := range h.Subscribe(ctx, Cursor{Key: key, CaughtUp: func(uint64) { cancel() }}) {
			if err != nil {
				t.Fatalf("Subscribe(%s): %v", key, err)
			}
			sub = append(sub, ev)
		}
		cancel()
		if !slices.EqualFunc(sub, got, func(a, b Event) bool { return a.Pos == b.Pos }) {
			t.Errorf("Subscribe(%s) yielded %d events, History %d: they differ", key, len(sub), len(got))
		}
		// A reader that resumes after any event of the history gets the
		// rest of it, inherited or own, and nothing else.
		for k := range got {
			rest := subscribeFrom(t, h, Cursor{Key: key, After: got[k].Pos})
			if !slices.EqualFunc(rest, got[k+1:], func(a, b Event) bool { return a.Pos == b.Pos }) {
				t.Errorf("Subscribe(%s) after %d yielded %v, want the %d events after it in the history", key, got[k].Pos, positionsOf(rest), len(got)-k-1)
			}
		}
	}
	// The inherited events keep the parent's key; the first of the fork's
	// own is its session event, which names the parent.
	var first *Event
	for ev := range History(ctxT(t), j, "c") {
		if ev.Key == "c" {
			first = &ev
			break
		}
		if ev.Key != "p" {
			t.Errorf("inherited event of key %q in the fork's history", ev.Key)
		}
	}
	if first == nil || first.Kind != KindSession || first.SessionReady.Fork == nil || first.SessionReady.Fork.Parent != "p" {
		t.Errorf("the fork's own history starts with %+v, want its session event naming p", first)
	}
}

// Without a journal a subscription to a fork shows the same, from the
// Host's memory, and goes on live with the fork's events only.
func TestForkSubscriptionWithoutAJournal(t *testing.T) {
	h, b, _, rec := forkHost(t, nil, forkScript(withFork, "one", "two", "three"))
	parent, err := b.OpenSession(ctxT(t), SessionConfig{Key: "p", Cwd: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	mustPrompt(t, parent, "one")
	child, err := parent.Fork(ctxT(t), ForkOptions{Key: "c"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(ctxT(t))
	defer cancel()
	caught := make(chan struct{})
	got := make(chan Event, 256)
	go func() {
		defer close(got)
		for ev, err := range h.Subscribe(ctx, Cursor{Key: "c", CaughtUp: func(uint64) { close(caught) }}) {
			if err != nil {
				return
			}
			got <- ev
		}
	}()
	waitfor.Recv(t, caught, "the subscription to the fork to catch up")
	mustPrompt(t, parent, "two")
	mustPrompt(t, child, "three")
	rec.waitFor("the fork's turn end", func(ev Event) bool { return ev.Kind == KindTurnEnd && ev.Key == "c" })
	var texts []string
	for ev := range got {
		if ev.Kind == KindText {
			texts = append(texts, ev.Text)
		}
		if ev.Kind == KindTurnEnd && ev.Key == "c" {
			cancel()
		}
	}
	if want := []string{"reply one", "reply three"}; !slices.Equal(texts, want) {
		t.Errorf("the fork's subscription saw texts %q, want %q", texts, want)
	}
}

// A parent's share ends at its fork's first event even when a reader meets
// the parent's later events before it learns where the fork begins, and
// holds none of the parent's turns after the one the fork branched after.
func TestLineageLearnsTheCutInPosOrder(t *testing.T) {
	l := &lineage{keys: []string{"p", "c"}, cuts: []uint64{0}, turns: []uint64{1}}
	var kept []uint64
	for _, ev := range []Event{{Pos: 1, Key: "p", Turn: 1}, {Pos: 2, Key: "x"}, {Pos: 3, Key: "p"}, {Pos: 4, Key: "p", Turn: 2},
		{Pos: 5, Key: "c"}, {Pos: 6, Key: "p"}, {Pos: 7, Key: "c", Turn: 2}} {
		if l.admit(&ev) {
			kept = append(kept, ev.Pos)
		}
	}
	if want := []uint64{1, 3, 5, 7}; !slices.Equal(kept, want) {
		t.Errorf("kept %v, want %v", kept, want)
	}
}

// A fork is made between turns: while a turn waits on a permission request
// Fork fails with ErrTurnRunning, sends nothing, and leaves the request
// waiting and answerable; once the turn ends the fork is made.
func TestForkWithAPendingPermissionRequest(t *testing.T) {
	script := forkScript(withFork, "after")
	script.Prompts = append(script.Prompts, acptest.Turn{Match: "ask", Steps: []acptest.Step{
		{Permission: &acptest.Permission{ToolCall: raw(`{"toolCallId":"t1","title":"rm"}`)}}}})
	_, b, tr, rec := forkHost(t, nil, script)
	parent, err := b.OpenSession(ctxT(t), SessionConfig{Cwd: t.TempDir(), Policy: Policy{Mode: ModeBuild}})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := parent.Prompt(ctxT(t), acpclient.TextBlock("ask")); done <- err }()
	perm := rec.waitFor("the permission event", func(ev Event) bool { return ev.Kind == KindPermission }).Permission
	if _, err := parent.Fork(ctxT(t), ForkOptions{}); !errors.Is(err, ErrTurnRunning) {
		t.Fatalf("Fork with a permission request waiting: %v, want ErrTurnRunning", err)
	}
	if n := len(sentTo(tr.Agents()[0], "session/fork")); n != 0 {
		t.Errorf("the agent got %d session/fork calls while the turn ran", n)
	}
	select {
	case <-perm.Done():
		t.Fatal("Fork settled the waiting permission request")
	default:
	}
	if err := perm.Allow(); err != nil {
		t.Fatalf("Allow after the refused fork: %v", err)
	}
	if err := waitfor.Recv(t, done, "the turn to end after the permission was allowed"); err != nil {
		t.Fatal(err)
	}
	child, err := parent.Fork(ctxT(t), ForkOptions{})
	if err != nil {
		t.Fatalf("Fork after the turn ended: %v", err)
	}
	if o := child.Ready().Fork; o == nil || o.AfterTurn != 1 {
		t.Errorf("fork after the turn: origin %+v, want after turn 1", o)
	}
}

// An agent that does not advertise session/fork cannot fork: CanFork says
// so before, Fork fails the same way, and nothing is sent or opened.
func TestForkUnsupported(t *testing.T) {
	h, b, tr, _ := forkHost(t, nil, forkScript(nil, "one"))
	parent, err := b.OpenSession(ctxT(t), SessionConfig{Cwd: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if err := parent.CanFork(0); !errors.Is(err, acpclient.ErrUnsupported) || !strings.Contains(err.Error(), "session/fork") {
		t.Errorf("CanFork(0) = %v, want ErrUnsupported naming session/fork", err)
	}
	if _, err := parent.Fork(ctxT(t), ForkOptions{}); !errors.Is(err, acpclient.ErrUnsupported) {
		t.Errorf("Fork = %v, want ErrUnsupported", err)
	}
	if n := len(sentTo(tr.Agents()[0], "session/fork")); n != 0 {
		t.Errorf("the agent got %d session/fork calls", n)
	}
	if list, err := h.Sessions(ctxT(t)); err != nil || len(list) != 1 {
		t.Errorf("sessions after a refused fork: %d, %v; want the parent alone", len(list), err)
	}
}

// Rewinding to before a past turn needs an agent that forks at a given
// point, which no ACP call offers: CanFork and Fork refuse it with
// ErrUnsupported and send nothing. Before the next turn is the end of the
// session, a plain fork; past it there is no such turn.
func TestRewindIsRefusedWithoutANativeWay(t *testing.T) {
	_, b, tr, _ := forkHost(t, nil, forkScript(withFork, "one", "two"))
	parent, err := b.OpenSession(ctxT(t), SessionConfig{Cwd: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	mustPrompt(t, parent, "one")
	mustPrompt(t, parent, "two")
	for _, turn := range []uint64{1, 2} {
		if err := parent.CanFork(turn); !errors.Is(err, acpclient.ErrUnsupported) || !strings.Contains(err.Error(), "earlier point") {
			t.Errorf("CanFork(%d) = %v, want ErrUnsupported saying the agent cannot fork at an earlier point", turn, err)
		}
		if _, err := parent.Fork(ctxT(t), ForkOptions{BeforeTurn: turn}); !errors.Is(err, acpclient.ErrUnsupported) {
			t.Errorf("Fork(BeforeTurn %d) = %v, want ErrUnsupported", turn, err)
		}
	}
	if err := parent.CanFork(4); err == nil || errors.Is(err, acpclient.ErrUnsupported) {
		t.Errorf("CanFork(4) of a session of 2 turns = %v, want an error saying there is no such turn", err)
	}
	if n := len(sentTo(tr.Agents()[0], "session/fork")); n != 0 {
		t.Fatalf("the agent got %d session/fork calls for refused rewinds", n)
	}
	if err := parent.CanFork(3); err != nil {
		t.Errorf("CanFork(3), the end of the session: %v", err)
	}
	child, err := parent.Fork(ctxT(t), ForkOptions{BeforeTurn: 3})
	if err != nil {
		t.Fatal(err)
	}
	if o := child.Ready().Fork; o == nil || o.AfterTurn != 2 {
		t.Errorf("fork before turn 3: origin %+v, want after turn 2", o)
	}
}

// A fork never takes over another session: a key that is open or has a
// record is refused, and nothing is sent.
func TestForkRefusesATakenKey(t *testing.T) {
	j := newLifeJournal()
	_, b, tr, _ := forkHost(t, j, forkScript(withFork))
	parent, err := b.OpenSession(ctxT(t), SessionConfig{Key: "p", Cwd: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	other, err := b.OpenSession(ctxT(t), SessionConfig{Key: "other", Cwd: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := parent.Fork(ctxT(t), ForkOptions{Key: "other"}); !errors.Is(err, ErrSessionOpen) {
		t.Errorf("Fork under an open session's key: %v, want ErrSessionOpen", err)
	}
	if err := other.Close(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	if _, err := parent.Fork(ctxT(t), ForkOptions{Key: "other"}); err == nil || !strings.Contains(err.Error(), "already names a session") {
		t.Errorf("Fork under a recorded session's key: %v", err)
	}
	if n := len(sentTo(tr.Agents()[0], "session/fork")); n != 0 {
		t.Errorf("the agent got %d session/fork calls", n)
	}
	if r, _ := j.record("other"); r.Fork != nil {
		t.Errorf("the recorded session became a fork: %+v", r.Fork)
	}
}

// subscribeFrom returns what a subscription from c yields until it has
// caught up.
func subscribeFrom(t *testing.T, h *Host, c Cursor) []Event {
	t.Helper()
	ctx, cancel := context.WithCancel(ctxT(t))
	defer cancel()
	c.CaughtUp = func(uint64) { cancel() }
	var out []Event
	for ev, err := range h.Subscribe(ctx, c) {
		if err != nil {
			t.Fatalf("Subscribe(%+v): %v", c, err)
		}
		out = append(out, ev)
	}
	return out
}

func positionsOf(evs []Event) []uint64 {
	var out []uint64
	for _, ev := range evs {
		out = append(out, ev.Pos)
	}
	return out
}

// A Prompt made while Fork runs waits for the fork: the parent's turn
// starts only after the fork has opened, so the fork holds none of it.
func TestPromptWaitsForAFork(t *testing.T) {
	script := forkScript(withFork, "one", "two")
	script.Methods = map[string]acptest.Reply{"session/fork": {
		Steps:  []acptest.Step{{Sleep: acptest.Duration(300 * time.Millisecond)}},
		Result: raw(`{"sessionId":"slow-fork"}`),
	}}
	_, b, tr, rec := forkHost(t, nil, script)
	parent, err := b.OpenSession(ctxT(t), SessionConfig{Key: "p", Cwd: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	mustPrompt(t, parent, "one")
	forked := make(chan error, 1)
	go func() { _, err := parent.Fork(ctxT(t), ForkOptions{Key: "c"}); forked <- err }()
	if _, err := tr.Agents()[0].WaitFor(ctxT(t), acptest.Method("session/fork")); err != nil {
		t.Fatalf("waiting for session/fork: %v", err)
	}
	mustPrompt(t, parent, "two")
	if err := waitfor.Recv(t, forked, "Fork to return"); err != nil {
		t.Fatal(err)
	}
	opened := rec.waitFor("the fork's session event", func(ev Event) bool { return ev.Kind == KindSession && ev.Key == "c" })
	started := rec.waitFor("the parent's second turn", func(ev Event) bool { return ev.Kind == KindTurnStart && ev.Key == "p" && ev.Turn == 2 })
	if started.Pos < opened.Pos {
		t.Errorf("the parent's turn started at %d, before the fork opened at %d", started.Pos, opened.Pos)
	}
}
