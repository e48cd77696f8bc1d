package bridge

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/acphost/acphost/internal/waitfor"
)

// subscription collects what a Subscribe yields, in its own goroutine.
type subscription struct {
	events []Event
	err    error
	done   chan struct{}
}

func subscribe(ctx context.Context, h *Host, from Cursor) *subscription {
	s := &subscription{done: make(chan struct{})}
	go func() {
		defer close(s.done)
		for ev, err := range h.Subscribe(ctx, from) {
			if err != nil {
				s.err = err
				continue
			}
			s.events = append(s.events, ev)
		}
	}()
	return s
}

// wait returns once the subscription has ended, failing the test if it
// does not end within a bound.
func (s *subscription) wait(t *testing.T) {
	t.Helper()
	select {
	case <-s.done:
	case <-time.After(30 * time.Second):
		t.Fatal("subscription did not end")
	}
}

func positions(events []Event) []uint64 {
	out := make([]uint64, 0, len(events))
	for _, ev := range events {
		out = append(out, ev.Pos)
	}
	return out
}

func mixedEvent(i int) Event {
	return Event{Bridge: []string{"a", "b"}[i%2], Key: []string{"k1", "k2", "k3"}[i%3], Kind: KindNotice, Text: fmt.Sprint(i)}
}

// TestSubscribeHistoryThenLive: subscriptions started after some events
// were delivered yield them from the tail, then the live ones, in Pos
// order, filtered by their cursor, without gap or duplicate; all end after
// Shutdown.
func TestSubscribeHistoryThenLive(t *testing.T) {
	for _, journal := range []bool{false, true} {
		t.Run(fmt.Sprintf("journal=%v", journal), func(t *testing.T) {
			opts := &HostOptions{}
			if journal {
				opts.Journal = newMemJournal()
			}
			h, rec := newHostAndRecorder(t, opts)
			for i := range 6 {
				h.events.push(mixedEvent(i))
			}
			rec.waitFor("history", func(ev Event) bool { return ev.Pos == 6 })
			cursors := []Cursor{{}, {After: 3}, {Key: "k1"}, {Bridge: "b"}, {Key: "k2", Bridge: "b", After: 2}}
			var subs []*subscription
			for _, c := range cursors {
				subs = append(subs, subscribe(context.Background(), h, c))
			}
			for i := 6; i < 12; i++ {
				h.events.push(mixedEvent(i))
			}
			if err := h.Shutdown(context.Background()); err != nil {
				t.Fatal(err)
			}
			waitfor.Closed(t, rec.done, "the recorder to have read every event")
			for i, c := range cursors {
				subs[i].wait(t)
				var want []uint64
				for _, ev := range rec.snapshot() {
					if ev.Pos > c.After && c.matches(&ev) {
						want = append(want, ev.Pos)
					}
				}
				if got := positions(subs[i].events); subs[i].err != nil || !reflect.DeepEqual(got, want) {
					t.Errorf("cursor %+v: positions %v (err %v), want %v", c, got, subs[i].err, want)
				}
			}
		})
	}
}

// TestSubscribeSlowSubscriberCatchesUpFromJournal: a subscriber that stops
// reading while three tails' worth of events pass neither slows the flood
// (it completes while the subscriber sleeps) nor loses anything: it
// catches up from the journal and then from the tail, without gap or
// duplicate.
func TestSubscribeSlowSubscriberCatchesUpFromJournal(t *testing.T) {
	const tail = 64
	j := newMemJournal()
	h, rec := newHostAndRecorder(t, &HostOptions{Journal: j, SubscriberTail: tail})
	started, resume := make(chan struct{}), make(chan struct{})
	const total = 1 + 3*tail
	var got []Event
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev, err := range h.Subscribe(context.Background(), Cursor{}) {
			if err != nil {
				t.Errorf("subscription: %v", err)
				return
			}
			got = append(got, ev)
			if len(got) == 1 {
				close(started)
				<-resume
			}
		}
	}()
	h.events.push(mixedEvent(0))
	waitfor.Closed(t, started, "the start to begin")
	readsBefore := j.readCount()
	for i := 1; i < total; i++ {
		h.events.push(mixedEvent(i))
	}
	rec.waitFor("the whole flood delivered while the subscriber sleeps", func(ev Event) bool { return ev.Pos == total })
	close(resume)
	if err := h.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitfor.Closed(t, done, "the call to return")
	if len(got) != total {
		t.Fatalf("subscriber got %d events, want %d", len(got), total)
	}
	for i, ev := range got {
		if ev.Pos != uint64(i+1) || ev.Text != fmt.Sprint(i) {
			t.Fatalf("event %d: pos %d text %q: a gap or a duplicate", i, ev.Pos, ev.Text)
		}
	}
	if j.readCount() == readsBefore {
		t.Error("the subscriber did not read the journal to catch up")
	}
}

// TestSubscribeWithoutJournalHistoryGone: without a journal, a cursor
// behind the in-memory tail ends with ErrHistoryGone, and one inside it
// reads on; a subscriber that sleeps past the tail gets its events up to
// there, then the error.
func TestSubscribeWithoutJournalHistoryGone(t *testing.T) {
	h, rec := newHostAndRecorder(t, &HostOptions{SubscriberTail: 4})
	for i := range 10 {
		h.events.push(mixedEvent(i))
	}
	rec.waitFor("all", func(ev Event) bool { return ev.Pos == 10 })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var events int
	var err error
	for ev, e := range h.Subscribe(ctx, Cursor{}) {
		if e != nil {
			err = e
			continue
		}
		events++
		_ = ev
	}
	if !errors.Is(err, ErrHistoryGone) || events != 0 {
		t.Fatalf("from the start: %d events, err %v; want none and ErrHistoryGone", events, err)
	}
	h.Shutdown(context.Background())
	inside := subscribe(ctx, h, Cursor{After: 6})
	inside.wait(t)
	if got := positions(inside.events); inside.err != nil || !reflect.DeepEqual(got, []uint64{7, 8, 9, 10}) {
		t.Fatalf("after 6: %v, err %v", got, inside.err)
	}
}

// TestSubscribeEndsOnContextAndShutdown: a waiting subscription ends when
// its context ends, and another when the Host shuts down (goleak checks
// that nothing is left running).
func TestSubscribeEndsOnContextAndShutdown(t *testing.T) {
	h, rec := newHostAndRecorder(t, &HostOptions{Journal: newMemJournal()})
	h.events.push(mixedEvent(0))
	rec.waitFor("the event", func(ev Event) bool { return ev.Pos == 1 })
	ctx, cancel := context.WithCancel(context.Background())
	byCtx := subscribe(ctx, h, Cursor{After: 1}) // waits: nothing after it yet
	byShutdown := subscribe(context.Background(), h, Cursor{})
	cancel()
	byCtx.wait(t)
	if byCtx.err != nil || len(byCtx.events) != 0 {
		t.Errorf("cancelled subscription: %d events, err %v", len(byCtx.events), byCtx.err)
	}
	if err := h.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	byShutdown.wait(t)
	if byShutdown.err != nil || len(byShutdown.events) != 1 {
		t.Errorf("subscription at shutdown: %d events, err %v; want the one event", len(byShutdown.events), byShutdown.err)
	}
	// A consumer that stops ranging ends the subscription too.
	for range h.Subscribe(context.Background(), Cursor{}) {
		break
	}
}

// TestSnapshotThenSubscribeSeam: a snapshot taken while events flow, then
// a subscription after its Pos, miss nothing and repeat nothing: applying
// the subscribed events to the snapshot's views gives the final views.
func TestSnapshotThenSubscribeSeam(t *testing.T) {
	h, rec := newHostAndRecorder(t, nil)
	const total = 3000
	var producers sync.WaitGroup
	for _, key := range []string{"k1", "k2"} {
		producers.Add(1)
		go func() {
			defer producers.Done()
			for i := range total / 2 {
				h.events.push(seamEvent(key, i))
			}
		}()
	}
	rec.waitFor("some events", func(ev Event) bool { return ev.Pos >= 200 })
	snap := h.Snapshot()
	sub := subscribe(context.Background(), h, Cursor{After: snap.Pos})
	producers.Wait()
	if err := h.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	sub.wait(t)
	if sub.err != nil || len(sub.events) == 0 || sub.events[0].Pos != snap.Pos+1 {
		t.Fatalf("subscription after the snapshot at %d: %d events, err %v", snap.Pos, len(sub.events), sub.err)
	}
	for i, ev := range sub.events {
		if ev.Pos != snap.Pos+1+uint64(i) {
			t.Fatalf("event %d has pos %d: gap or duplicate", i, ev.Pos)
		}
	}
	if last := sub.events[len(sub.events)-1].Pos; last != total {
		t.Fatalf("last subscribed pos %d, want %d", last, total)
	}
	views := map[string]*SessionView{}
	for i := range snap.Sessions {
		views[snap.Sessions[i].Key] = &snap.Sessions[i]
	}
	for _, ev := range sub.events {
		if views[ev.Key] == nil {
			views[ev.Key] = &SessionView{}
		}
		views[ev.Key].Apply(ev)
	}
	for _, final := range h.Snapshot().Sessions {
		built := *views[final.Key]
		built.rows, final.rows = nil, nil // a cache of Apply's, not state
		if !reflect.DeepEqual(built, final) {
			t.Errorf("session %s: snapshot + subscription\n%+v\nfinal view\n%+v", final.Key, *views[final.Key], final)
		}
	}
}

// seamEvent is the i-th event of a session that runs turns of tool calls.
func seamEvent(key string, i int) Event {
	turn := uint64(i/10 + 1)
	ev := Event{Bridge: "a", Key: key, Turn: turn}
	switch i % 10 {
	case 0:
		ev.Kind = KindTurnStart
	case 9:
		ev.Kind = KindTurnEnd
	case 1, 3, 5:
		ev.Kind, ev.Tool = KindToolStart, &ToolCall{ID: fmt.Sprintf("call_%d", i%10), Status: "pending"}
	case 2, 4:
		ev.Kind, ev.Tool = KindToolEnd, &ToolCall{ID: fmt.Sprintf("call_%d", i%10-1), Status: "completed"}
	default:
		ev.Kind, ev.Usage = KindUsage, &Usage{Known: true, Used: int64(i)}
	}
	return ev
}

// A cursor after the last event the Host and its journal numbered comes
// from another stream: it fails with ErrCursorAhead instead of waiting and
// silently skipping what the subscriber missed. The last Pos itself is a
// valid cursor (nothing missed yet).
func TestSubscribeCursorAhead(t *testing.T) {
	for _, withJournal := range []bool{false, true} {
		opts := &HostOptions{}
		if withJournal {
			opts.Journal = newMemJournal()
		}
		h, rec := newHostAndRecorder(t, opts)
		for i := range 3 {
			h.events.push(mixedEvent(i))
		}
		rec.waitFor("all", func(ev Event) bool { return ev.Pos == 3 })
		ctx, cancel := context.WithCancel(context.Background())
		var err error
		for _, e := range h.Subscribe(ctx, Cursor{After: 9}) {
			err = e
		}
		if !errors.Is(err, ErrCursorAhead) {
			t.Errorf("journal %v: a cursor after the end: %v, want ErrCursorAhead", withJournal, err)
		}
		at := subscribe(ctx, h, Cursor{After: 3})
		h.Shutdown(context.Background())
		at.wait(t)
		if at.err != nil || len(at.events) != 0 {
			t.Errorf("journal %v: the last Pos as cursor: %v, err %v", withJournal, positions(at.events), at.err)
		}
		cancel()
	}
}

// TestSubscribeCaughtUp: CaughtUp is called once, when every event
// published before has been yielded (from the journal beyond the tail, then
// the tail), with the position read up to, also when the last events do
// not match; cancelling in it ends the subscription with the history
// alone, and a subscription that goes on gets the live events after it.
func TestSubscribeCaughtUp(t *testing.T) {
	for _, journal := range []bool{false, true} {
		t.Run(fmt.Sprintf("journal=%v", journal), func(t *testing.T) {
			opts := &HostOptions{}
			if journal {
				opts.Journal, opts.SubscriberTail = newMemJournal(), 4
			}
			h, rec := newHostAndRecorder(t, opts)
			for i := range 8 {
				h.events.push(mixedEvent(i)) // k1 at Pos 1, 4, 7
			}
			rec.waitFor("history", func(ev Event) bool { return ev.Pos == 8 })

			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var caughtAt []uint64
			var seenThen int
			history := &subscription{done: make(chan struct{})}
			go func() {
				defer close(history.done)
				for ev, err := range h.Subscribe(ctx, Cursor{Key: "k1", CaughtUp: func(pos uint64) {
					caughtAt = append(caughtAt, pos)
					cancel()
				}}) {
					if err != nil {
						history.err = err
						continue
					}
					history.events = append(history.events, ev)
				}
			}()
			history.wait(t)
			if got := positions(history.events); history.err != nil || !reflect.DeepEqual(got, []uint64{1, 4, 7}) || !reflect.DeepEqual(caughtAt, []uint64{8}) {
				t.Errorf("history then stop: positions %v (err %v), caught up at %v; want [1 4 7], caught up once at 8", got, history.err, caughtAt)
			}

			var mu sync.Mutex
			live := &subscription{done: make(chan struct{})}
			var liveCaught []uint64
			caught := make(chan struct{})
			go func() {
				defer close(live.done)
				for ev, err := range h.Subscribe(context.Background(), Cursor{After: 2, CaughtUp: func(pos uint64) {
					mu.Lock()
					liveCaught = append(liveCaught, pos)
					seenThen = len(live.events)
					mu.Unlock()
					close(caught) // a second call would panic
				}}) {
					if err != nil {
						live.err = err
						continue
					}
					mu.Lock()
					live.events = append(live.events, ev)
					mu.Unlock()
				}
			}()
			select {
			case <-caught:
			case <-time.After(30 * time.Second):
				t.Fatal("the live subscription never said it caught up")
			}
			for i := 8; i < 10; i++ {
				h.events.push(mixedEvent(i))
			}
			if err := h.Shutdown(context.Background()); err != nil {
				t.Fatal(err)
			}
			live.wait(t)
			if len(live.events) != 8 || seenThen != 6 || !reflect.DeepEqual(liveCaught, []uint64{8}) {
				t.Errorf("live: %d events, %d before catching up, caught up at %v; want 8, 6, once at 8", len(live.events), seenThen, liveCaught)
			}
		})
	}
}
