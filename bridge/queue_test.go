package bridge

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/acptest"
	"github.com/acphost/acphost/internal/waitfor"
)

// holdTurn is a turn that runs until it is cancelled: the gate the queue
// tests hold the session with.
var holdTurn = acptest.Turn{Match: "hold", Steps: []acptest.Step{{Text: "holding"}, {WaitCancel: true}}}

// queueSession opens session key k on a fake agent with script, on a Host
// with journal j (nil: none).
func queueSession(t *testing.T, script acptest.Script, j Journal, cfg SessionConfig) (*Session, *recorder, *acptest.Transport) {
	t.Helper()
	tr := &acptest.Transport{Script: script}
	var opts *HostOptions
	if j != nil {
		opts = &HostOptions{Journal: j}
	}
	h, rec := newHostAndRecorder(t, opts)
	b, err := h.Start(ctxT(t), Config{ID: "q", Transport: tr})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Cwd == "" {
		cfg.Cwd = "/w"
	}
	s, err := b.OpenSession(ctxT(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s, rec, tr
}

// hold starts the holding turn and waits until it runs; the returned
// channel gets Prompt's error.
func hold(t *testing.T, s *Session, rec *recorder) <-chan error {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		_, err := s.Prompt(ctxT(t), acpclient.TextBlock("hold"))
		done <- err
	}()
	rec.waitFor("the holding turn", func(ev Event) bool { return ev.Kind == KindText && ev.Text == "holding" })
	return done
}

// queueIDs lists the ids of prompts.
func queueIDs(prompts []QueuedPrompt) []string {
	var ids []string
	for _, p := range prompts {
		ids = append(ids, p.ID)
	}
	return ids
}

// turnStarts lists the prompt texts of the turn_start events so far.
func turnStarts(rec *recorder) []string {
	var texts []string
	for _, ev := range rec.snapshot() {
		if ev.Kind == KindTurnStart {
			texts = append(texts, ev.Text)
		}
	}
	return texts
}

// queueChanges lists "change id" of the queue events so far.
func queueChanges(rec *recorder) []string {
	var out []string
	for _, ev := range rec.snapshot() {
		if ev.Kind == KindQueue {
			out = append(out, strings.TrimSpace(ev.Queue.Change+" "+ev.Queue.ID))
		}
	}
	return out
}

func mustEnqueue(t *testing.T, s *Session, text string) string {
	t.Helper()
	id, err := s.Enqueue(ctxT(t), acpclient.TextBlock(text))
	if err != nil {
		t.Fatalf("Enqueue(%q): %v", text, err)
	}
	return id
}

// Prompts queued while a turn runs wait, visible, and run in order as
// turns of their own once it ends; a cancel keeps the queue, whose next
// prompt then runs. Each step is a queue event carrying the whole queue.
func TestQueuedPromptsRunInOrderAfterTheTurn(t *testing.T) {
	s, rec, _ := queueSession(t, acptest.Script{Prompts: []acptest.Turn{holdTurn}}, nil, SessionConfig{})
	done := hold(t, s, rec)
	a, b := mustEnqueue(t, s, "first"), mustEnqueue(t, s, "second")
	if prompts, paused := s.Queue(); !slices.Equal(queueIDs(prompts), []string{a, b}) || paused {
		t.Fatalf("Queue() = %v, paused %v; want [%s %s], running", queueIDs(prompts), paused, a, b)
	}
	if _, err := s.Prompt(ctxT(t), acpclient.TextBlock("direct")); !errors.Is(err, ErrBusy) {
		t.Errorf("Prompt during the turn: %v, want ErrBusy (queueing is Enqueue's)", err)
	}
	s.Cancel()
	if err := waitfor.Recv(t, done, "the holding turn to end"); err != nil {
		t.Fatal(err)
	}
	rec.waitFor("the second queued turn to end", func(ev Event) bool { return ev.Kind == KindTurnEnd && ev.Turn == 3 })
	if got := turnStarts(rec); !slices.Equal(got, []string{"hold", "first", "second"}) {
		t.Errorf("turns %q, want hold, first, second", got)
	}
	want := []string{"queued " + a, "queued " + b, "started " + a, "started " + b}
	if got := queueChanges(rec); !slices.Equal(got, want) {
		t.Errorf("queue events %q, want %q", got, want)
	}
	for _, ev := range rec.snapshot() {
		if ev.Kind == KindQueue && ev.Queue.Change == "started" && ev.Queue.ID == a && (ev.Turn != 2 || !slices.Equal(queueIDs(ev.Queue.Prompts), []string{b})) {
			t.Errorf("started %s: turn %d, queue %v; want turn 2, queue [%s]", a, ev.Turn, queueIDs(ev.Queue.Prompts), b)
		}
	}
	if prompts, _ := s.Queue(); len(prompts) != 0 {
		t.Errorf("queue after the run: %v", queueIDs(prompts))
	}
}

// A prompt queued while no turn runs starts at once, as its own turn.
func TestEnqueueOnAnIdleSessionRunsAtOnce(t *testing.T) {
	s, rec, _ := queueSession(t, acptest.Script{}, nil, SessionConfig{})
	mustEnqueue(t, s, "now")
	rec.waitFor("the queued turn to end", func(ev Event) bool { return ev.Kind == KindTurnEnd && ev.Turn == 1 })
	if got := turnStarts(rec); !slices.Equal(got, []string{"now"}) {
		t.Errorf("turns %q, want [now]", got)
	}
}

// A turn that ends in an error or a refusal pauses a queue that holds
// prompts (an event says why) instead of sending them on; ResumeQueue
// runs them.
func TestAFailedTurnPausesTheQueue(t *testing.T) {
	for _, tc := range []struct {
		name string
		turn acptest.Turn
		why  string
	}{
		{"error", acptest.Turn{Error: &acptest.Error{Code: -32603, Message: "overloaded"}}, "overloaded"},
		{"refusal", acptest.Turn{StopReason: acpclient.StopRefusal}, "refused"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gated := tc.turn
			gated.Match, gated.Steps = "gate", []acptest.Step{{Permission: &acptest.Permission{}}}
			s, rec, tr := queueSession(t, acptest.Script{Prompts: []acptest.Turn{gated}}, nil, SessionConfig{Policy: Policy{Mode: ModeBuild}})
			mustEnqueue(t, s, "gate")
			perm := rec.waitFor("the permission request", func(ev Event) bool { return ev.Kind == KindPermission })
			next := mustEnqueue(t, s, "next")
			if err := perm.Permission.Allow(); err != nil {
				t.Fatal(err)
			}
			paused := rec.waitFor("the queue to pause", func(ev Event) bool { return ev.Kind == KindQueue && ev.Queue.Change == "paused" })
			if !paused.Queue.Paused || paused.Turn != 1 || !strings.Contains(paused.Queue.Reason, tc.why) ||
				!slices.Equal(queueIDs(paused.Queue.Prompts), []string{next}) {
				t.Errorf("paused event: turn %d %+v; want turn 1, paused, a reason naming %q, [%s] queued", paused.Turn, *paused.Queue, tc.why, next)
			}
			if prompts, isPaused := s.Queue(); !isPaused || len(prompts) != 1 {
				t.Fatalf("Queue() = %v, %v; want [%s], paused", queueIDs(prompts), isPaused, next)
			}
			if n := len(sentTo(tr.Agents()[0], "session/prompt")); n != 1 {
				t.Fatalf("%d prompts sent after the failed turn, want only the failed one", n)
			}
			if err := s.ResumeQueue(); err != nil {
				t.Fatal(err)
			}
			rec.waitFor("the queued turn to end", func(ev Event) bool { return ev.Kind == KindTurnEnd && ev.Turn == 2 })
			if got := turnStarts(rec); !slices.Equal(got, []string{"gate", "next"}) {
				t.Errorf("turns %q, want gate, next", got)
			}
		})
	}
}

// Queued prompts are reordered and removed by id, in the queue and in
// the Host's snapshot; an unknown id is ErrNotQueued.
func TestQueueReorderAndRemove(t *testing.T) {
	s, rec, _ := queueSession(t, acptest.Script{Prompts: []acptest.Turn{holdTurn}}, nil, SessionConfig{})
	done := hold(t, s, rec)
	a, b, c := mustEnqueue(t, s, "a"), mustEnqueue(t, s, "b"), mustEnqueue(t, s, "c")
	if err := s.MoveQueued(c, 0); err != nil {
		t.Fatal(err)
	}
	if err := s.MoveQueued(a, 99); err != nil {
		t.Fatal(err)
	}
	if prompts, _ := s.Queue(); !slices.Equal(queueIDs(prompts), []string{c, b, a}) {
		t.Fatalf("after the moves: %v, want [%s %s %s]", queueIDs(prompts), c, b, a)
	}
	if err := s.RemoveQueued(b); err != nil {
		t.Fatal(err)
	}
	if err := s.RemoveQueued(b); !errors.Is(err, ErrNotQueued) {
		t.Errorf("removing it again: %v, want ErrNotQueued", err)
	}
	if err := s.MoveQueued("q-nope", 0); !errors.Is(err, ErrNotQueued) {
		t.Errorf("moving an unknown id: %v, want ErrNotQueued", err)
	}
	rec.waitFor("the removed event", func(ev Event) bool { return ev.Kind == KindQueue && ev.Queue.Change == "removed" })
	view := viewOf(t, s)
	if !slices.Equal(queueIDs(view.Queue), []string{c, a}) {
		t.Errorf("snapshot queue %v, want [%s %s]", queueIDs(view.Queue), c, a)
	}
	s.Cancel()
	waitfor.Recv(t, done, "the holding turn to end")
	rec.waitFor("the last queued turn to end", func(ev Event) bool { return ev.Kind == KindTurnEnd && ev.Turn == 3 })
	if got := turnStarts(rec); !slices.Equal(got, []string{"hold", "c", "a"}) {
		t.Errorf("turns %q, want hold, c, a", got)
	}
}

// viewOf returns the session's view in its Host's snapshot.
func viewOf(t *testing.T, s *Session) SessionView {
	t.Helper()
	for _, v := range s.b.host.Snapshot().Sessions {
		if v.Key == s.Key() {
			return v
		}
	}
	t.Fatalf("no view of session %s in the snapshot", s.Key())
	return SessionView{}
}

// ClearQueue, then Cancel, ends the turn and drops what was queued: no
// other turn runs.
func TestClearQueueThenCancelStopsEverything(t *testing.T) {
	s, rec, tr := queueSession(t, acptest.Script{Prompts: []acptest.Turn{holdTurn}}, nil, SessionConfig{})
	done := hold(t, s, rec)
	mustEnqueue(t, s, "a")
	mustEnqueue(t, s, "b")
	s.ClearQueue()
	s.Cancel()
	waitfor.Recv(t, done, "the holding turn to end")
	rec.waitFor("the cleared event", func(ev Event) bool { return ev.Kind == KindQueue && ev.Queue.Change == "cleared" })
	// A prompt queued now runs at once: had a cleared one survived, it
	// would run first.
	mustEnqueue(t, s, "after")
	rec.waitFor("the next turn to end", func(ev Event) bool { return ev.Kind == KindTurnEnd && ev.Turn == 2 })
	if got := turnStarts(rec); !slices.Equal(got, []string{"hold", "after"}) {
		t.Errorf("turns %q, want hold, after", got)
	}
	if n := len(sentTo(tr.Agents()[0], "session/prompt")); n != 2 {
		t.Errorf("%d prompts sent, want 2", n)
	}
}

// Past SessionConfig.QueueLimit, Enqueue fails with ErrQueueFull and the
// queue is unchanged.
func TestQueueLimit(t *testing.T) {
	s, rec, _ := queueSession(t, acptest.Script{Prompts: []acptest.Turn{holdTurn}}, nil, SessionConfig{QueueLimit: 2})
	done := hold(t, s, rec)
	mustEnqueue(t, s, "a")
	mustEnqueue(t, s, "b")
	_, err := s.Enqueue(ctxT(t), acpclient.TextBlock("c"))
	if !errors.Is(err, ErrQueueFull) || !strings.Contains(err.Error(), "2 prompts queued") {
		t.Errorf("third Enqueue: %v, want ErrQueueFull naming the count", err)
	}
	if prompts, _ := s.Queue(); len(prompts) != 2 {
		t.Errorf("queue holds %d, want 2", len(prompts))
	}
	s.ClearQueue()
	s.Cancel()
	waitfor.Recv(t, done, "the holding turn to end")
}

// Close drops the queue with an event before session_closed, runs none of
// it, and the record keeps no queue.
func TestCloseDropsTheQueue(t *testing.T) {
	j := newLifeJournal()
	s, rec, tr := queueSession(t, acptest.Script{Prompts: []acptest.Turn{holdTurn}}, j, SessionConfig{Key: "k"})
	done := hold(t, s, rec)
	mustEnqueue(t, s, "a")
	j.mu.Lock()
	journaled := j.records["k"].Queue
	j.mu.Unlock()
	if got := journaled; len(got) != 1 {
		t.Fatalf("the journal's record holds %d queued prompts, want 1 (queued prompts are journaled at once)", len(got))
	}
	if err := s.Close(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	waitfor.Recv(t, done, "the holding turn to end")
	rec.waitFor("session_closed", func(ev Event) bool { return ev.Kind == KindSessionClosed })
	var order []string
	for _, ev := range rec.snapshot() {
		if ev.Kind == KindQueue && ev.Queue.Change == "dropped" || ev.Kind == KindSessionClosed {
			order = append(order, string(ev.Kind))
		}
	}
	if !slices.Equal(order, []string{"queue", "session_closed"}) {
		t.Errorf("events %q, want a dropped queue event, then session_closed", order)
	}
	j.mu.Lock()
	kept := j.records["k"].Queue
	j.mu.Unlock()
	if len(kept) != 0 {
		t.Errorf("the record keeps %d queued prompts after Close", len(kept))
	}
	if n := len(sentTo(tr.Agents()[0], "session/prompt")); n != 1 {
		t.Errorf("%d prompts sent, want only the holding one", n)
	}
}

// After an app restart, the resumed session has its queue back, paused,
// and nothing runs until ResumeQueue; then the prompts run in order.
func TestRestartKeepsTheQueueAndRunsNothingUnasked(t *testing.T) {
	j := newLifeJournal()
	script := acptest.Script{NewSession: acptest.NewSessionScript{SessionIDs: []string{"sess_R"}}, Prompts: []acptest.Turn{holdTurn}}
	s, rec, _ := queueSession(t, script, j, SessionConfig{Key: "k"})
	done := hold(t, s, rec)
	a, b, c := mustEnqueue(t, s, "a"), mustEnqueue(t, s, "b"), mustEnqueue(t, s, "c")
	// The app goes away without closing the session: its Host shuts down.
	if err := s.b.host.Shutdown(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	<-done

	s2, rec2, tr2 := queueSession(t, acptest.Script{LoadSession: acptest.LoadSessionScript{Sessions: []string{"sess_R"}}}, j, SessionConfig{Key: "k"})
	prompts, paused := s2.Queue()
	if !slices.Equal(queueIDs(prompts), []string{a, b, c}) || !paused {
		t.Fatalf("resumed queue %v, paused %v; want [%s %s %s], paused", queueIDs(prompts), paused, a, b, c)
	}
	if prompts[0].Text != "a" || len(prompts[0].Content) != 1 || prompts[0].Content[0].Text != "a" {
		t.Errorf("first restored prompt %+v, want the text a", prompts[0])
	}
	restored := rec2.waitFor("the restored event", func(ev Event) bool { return ev.Kind == KindQueue })
	if restored.Queue.Change != "restored" || !restored.Queue.Paused || len(restored.Queue.Prompts) != 3 {
		t.Errorf("first queue event %+v, want restored, paused, three prompts", *restored.Queue)
	}
	if v := viewOf(t, s2); len(v.Queue) != 3 || !v.QueuePaused {
		t.Errorf("snapshot: %d queued, paused %v; want 3, paused", len(v.Queue), v.QueuePaused)
	}
	if n := len(sentTo(tr2.Agents()[0], "session/prompt")); n != 0 {
		t.Fatalf("%d prompts sent after the restart before ResumeQueue", n)
	}
	if err := s2.ResumeQueue(); err != nil {
		t.Fatal(err)
	}
	rec2.waitFor("the last restored prompt's turn to end", func(ev Event) bool { return ev.Kind == KindTurnEnd && ev.Turn == 4 })
	if got := turnStarts(rec2); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Errorf("turns after the restart %q, want a, b, c", got)
	}
}

// An app without a journal keeps the queue in its Store: a session opened
// again by its key has it back, paused.
func TestStoreKeepsTheQueue(t *testing.T) {
	store := NewFileStore(t.TempDir() + "/sessions.json")
	script := acptest.Script{NewSession: acptest.NewSessionScript{SessionIDs: []string{"sess_S"}}, Prompts: []acptest.Turn{holdTurn}}
	s, rec, _ := queueSession(t, script, nil, SessionConfig{Key: "k", Store: store})
	done := hold(t, s, rec)
	a := mustEnqueue(t, s, "a")
	if err := s.b.host.Shutdown(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	<-done
	s2, _, _ := queueSession(t, acptest.Script{LoadSession: acptest.LoadSessionScript{Sessions: []string{"sess_S"}}}, nil, SessionConfig{Key: "k", Store: store})
	if prompts, paused := s2.Queue(); !slices.Equal(queueIDs(prompts), []string{a}) || !paused {
		t.Errorf("queue from the Store %v, paused %v; want [%s], paused", queueIDs(prompts), paused, a)
	}
}

// The view folds queue events: the queue and whether it is paused, as the
// last event says.
func TestViewFoldsTheQueue(t *testing.T) {
	p := QueuedPrompt{ID: "q-1", Content: []acpclient.ContentBlock{acpclient.TextBlock("next")}, Text: "next"}
	var v SessionView
	v.Apply(Event{Key: "k", Kind: KindQueue, Queue: &QueueUpdate{Change: "queued", ID: "q-1", Prompts: []QueuedPrompt{p}}})
	v.Apply(Event{Key: "k", Kind: KindTurnEnd, StopReason: "end_turn"})
	v.Apply(Event{Key: "k", Kind: KindQueue, Queue: &QueueUpdate{Change: "paused", Paused: true, Prompts: []QueuedPrompt{p}}})
	if len(v.Queue) != 1 || !v.QueuePaused {
		t.Fatalf("view queue %v, paused %v; want [q-1], paused", queueIDs(v.Queue), v.QueuePaused)
	}
	c := v.clone()
	v.Apply(Event{Key: "k", Kind: KindQueue, Queue: &QueueUpdate{Change: "started", ID: "q-1"}})
	if len(v.Queue) != 0 || v.QueuePaused || len(c.Queue) != 1 {
		t.Errorf("after started: %v, paused %v (clone %v); want empty, running, the clone unchanged", queueIDs(v.Queue), v.QueuePaused, queueIDs(c.Queue))
	}
}
