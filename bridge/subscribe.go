package bridge

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
)

// ErrHistoryGone is the error a subscription ends with when its cursor lies
// before the events the Host still holds: they left the in-memory tail and
// there is no Journal to read them from.
var ErrHistoryGone = errors.New("bridge: events after the cursor are no longer held")

// ErrCursorAhead is the error of a subscription whose cursor lies after
// every event the Host has numbered: a position from another stream.
var ErrCursorAhead = errors.New("bridge: the cursor is ahead of the stream")

// subscribePage is how many events a subscriber reads from the journal at
// a time while it catches up.
const subscribePage = 512

// Cursor says where a subscription starts and which events it wants.
type Cursor struct {
	// After is the Pos of the last event already seen: the subscription
	// yields events with a greater Pos (0: from the beginning).
	After uint64
	// Key, when set, selects the events of one session (its host key);
	// for a fork, with the events of the session it was forked from up to
	// the fork first (see History).
	Key string
	// Bridge, when set, selects the events of one bridge.
	Bridge string
	// CaughtUp, when set, is called once, in the goroutine that ranges
	// over the subscription, when it has yielded every matching event the
	// Host had published (or journaled) by then and is about to wait for
	// live ones: the history is done. pos is the Pos the subscription has
	// read up to, a cursor for later. To read history and stop, cancel the
	// subscription's context in it; the subscription then ends without
	// yielding more.
	CaughtUp func(pos uint64)
}

func (c Cursor) matches(ev *Event) bool {
	return (c.Key == "" || ev.Key == c.Key) && (c.Bridge == "" || ev.Bridge == c.Bridge)
}

// Subscribe yields the Host's events after the cursor that match it, in Pos
// order: first the history (from the in-memory tail, or from the Journal
// for what has left it), then live events as they happen, with no gap and
// no duplicate between the two. It ends when ctx ends, or once the Host has
// shut down and every event was yielded. A subscriber that stops reading
// never slows the agents: it falls behind the tail and, with a Journal,
// catches up from it; without one it gets ErrHistoryGone and ends. An error
// is the last thing yielded. Cursor.CaughtUp says when the history is done.
//
// Each subscription runs in the goroutine that ranges over it; any number
// may run at once, beside Events, which keeps its own contract.
func (h *Host) Subscribe(ctx context.Context, from Cursor) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		if err := h.events.hub.checkCursor(ctx, from.After); err != nil {
			yield(Event{}, err)
			return
		}
		sub := subscriber{hub: h.events.hub, cursor: from, after: from.After, yield: yield}
		if from.Key != "" {
			l, err := h.forkLineage(ctx, from.Key)
			if err != nil {
				yield(Event{}, err)
				return
			}
			sub.lineage = l // a fork's history is its parent's, then its own
		}
		if err := sub.run(ctx); err != nil {
			yield(Event{}, err)
		}
	}
}

// checkCursor refuses a cursor after every event the Host (and its
// journal) has numbered: it comes from another stream (a journal that was
// reset, another Host), and waiting would silently skip what it missed.
func (h *hub) checkCursor(ctx context.Context, after uint64) error {
	if after == 0 {
		return nil
	}
	h.mu.Lock()
	var end uint64
	if h.n > 0 {
		end = h.ring[(h.start+h.n-1)%len(h.ring)].Pos
	}
	h.mu.Unlock()
	if after <= end {
		return nil
	}
	if h.journal != nil {
		last, err := h.journal.LastPos(ctx)
		if err != nil {
			return fmt.Errorf("bridge: subscribing after %d: %w", after, err)
		}
		end = max(end, last)
	}
	if after > end {
		return fmt.Errorf("bridge: subscribing after %d, but the stream ends at %d: %w", after, end, ErrCursorAhead)
	}
	return nil
}

// look copies up to max matching events with Pos after after.
func (h *hub) look(after uint64, c Cursor, max int) view { return h.lookMatch(after, c.matches, max) }

// subscriber is one running subscription.
type subscriber struct {
	hub    *hub
	cursor Cursor
	after  uint64 // Pos of the last event yielded or skipped
	yield  func(Event, error) bool
	// lineage, for a fork, lets its parents' events before it through
	// (forkhistory.go); nil otherwise.
	lineage *lineage
	done    bool // the consumer stopped ranging
	caught  bool // CaughtUp was called
}

// run yields until the end of the stream, ctx or the consumer stops it.
func (s *subscriber) run(ctx context.Context) error {
	if s.hub.journal != nil {
		if err := s.catchUp(ctx); err != nil || s.done {
			return err
		}
	}
	for {
		v := s.hub.lookMatch(s.after, s.match, subscribePage)
		if v.behind {
			if s.hub.journal == nil {
				return fmt.Errorf("%w: cursor %d, oldest held %d", ErrHistoryGone, s.after, v.oldest)
			}
			if err := s.catchUp(ctx); err != nil || s.done {
				return err
			}
			continue
		}
		prev := s.after
		if !s.emit(ctx, v.events) {
			return nil
		}
		s.after = v.scanned
		if s.after != prev {
			continue
		}
		if !s.caught && s.cursor.CaughtUp != nil {
			s.caught = true
			s.cursor.CaughtUp(s.after)
			if ctx.Err() != nil {
				return nil
			}
		}
		if v.closed {
			return nil
		}
		select {
		case <-v.changed:
		case <-ctx.Done():
			return nil
		}
	}
}

// emit yields events in order; false when the subscription is to end.
func (s *subscriber) emit(ctx context.Context, events []Event) bool {
	for _, ev := range events {
		if ctx.Err() != nil || !s.yield(ev, nil) {
			s.done = true
			return false
		}
		s.after = ev.Pos
	}
	return true
}

// catchUp reads journal pages after the cursor until a short page says
// the journal has nothing more. Every event the ring held before the read
// was journaled before it was published, so the cursor may then move up to
// the ring's oldest event: what lies between was in the pages, or did not
// match.
func (s *subscriber) catchUp(ctx context.Context) error {
	oldest := s.hub.look(s.after, s.cursor, 0).oldest
	if s.lineage != nil {
		if err := s.catchUpLineage(ctx); err != nil || s.done {
			return err
		}
		if oldest > 0 && oldest-1 > s.after {
			s.after = oldest - 1
		}
		return nil
	}
	for {
		page, err := s.hub.journal.ReadEvents(ctx, EventQuery{After: s.after, Key: s.cursor.Key,
			Bridge: s.cursor.Bridge, Limit: subscribePage})
		if ctx.Err() != nil {
			s.done = true
			return nil
		}
		if err != nil {
			return fmt.Errorf("bridge: subscriber reading the journal after %d: %w", s.after, err)
		}
		if !s.emit(ctx, page) {
			return nil
		}
		if len(page) < subscribePage {
			if oldest > 0 && oldest-1 > s.after {
				s.after = oldest - 1
			}
			return nil
		}
	}
}

// forkLineage is the lineage a subscription to key shows: the journal's
// records say who forked from whom, else the sessions open in the Host.
func (h *Host) forkLineage(ctx context.Context, key string) (*lineage, error) {
	origin := func(_ context.Context, key string) (*ForkOrigin, error) {
		if s := h.openSession(key); s != nil {
			return s.fork, nil
		}
		return nil, nil
	}
	if h.journal != nil {
		origin = journalOrigin(h.journal)
	}
	return lineageOf(ctx, key, origin, h.events.hub.firstPos)
}

// History yields the journaled history of session key, in Pos order: for
// a fork (Session.Fork), the events of the session it was forked from up
// to the fork (and so on up the chain of forks), then its own. The events
// are yielded as they were journaled: an inherited one keeps its parent's
// Key, Pos and Seq. It is what Host.Subscribe yields as history for a
// Cursor with that Key, for a reader without a Host, such as a program
// showing a journal another one writes. A parent deleted from the journal
// takes its share of its forks' history with it. An error is the last
// thing yielded.
func History(ctx context.Context, j Journal, key string) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		h := newHub(1, 0, j)
		h.close() // the journal alone: nothing is published
		l, err := lineageOf(ctx, key, journalOrigin(j), h.firstPos)
		if err != nil {
			yield(Event{}, err)
			return
		}
		sub := subscriber{hub: h, cursor: Cursor{Key: key}, lineage: l, yield: yield}
		if err := sub.run(ctx); err != nil {
			yield(Event{}, err)
		}
	}
}

// match reports whether the subscription yields ev.
func (s *subscriber) match(ev *Event) bool {
	if s.lineage == nil {
		return s.cursor.matches(ev)
	}
	return (s.cursor.Bridge == "" || ev.Bridge == s.cursor.Bridge) && s.lineage.admit(ev)
}

// catchUpLineage reads a fork's journaled history after the cursor: each
// ancestor's share in turn, oldest first, then the fork's own events.
// Every share lies below the next key's first event, so this is Pos order.
func (s *subscriber) catchUpLineage(ctx context.Context) error {
	l := s.lineage
	for i, key := range l.keys {
		for {
			if i < len(l.cuts) && l.cuts[i] != 0 && l.cuts[i] <= s.after+1 {
				break // the cursor is past this share
			}
			page, err := s.hub.journal.ReadEvents(ctx, EventQuery{After: s.after, Key: key,
				Bridge: s.cursor.Bridge, Limit: subscribePage})
			if ctx.Err() != nil {
				s.done = true
				return nil
			}
			if err == nil && i < len(l.cuts) && l.cuts[i] == 0 {
				// Read after the page: a later event of this key on the
				// page was journaled after the next key's first one.
				l.cuts[i], err = s.hub.firstPos(ctx, l.keys[i+1])
			}
			if err != nil {
				return fmt.Errorf("bridge: subscriber reading the journal after %d: %w", s.after, err)
			}
			kept := slices.DeleteFunc(page, func(ev Event) bool { return !l.admit(&ev) })
			full := len(page) == subscribePage
			if !s.emit(ctx, kept) {
				return nil
			}
			if !full || len(kept) < len(page) {
				break // the end of the key's events, or of its share
			}
		}
	}
	return nil
}
