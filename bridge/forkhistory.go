package bridge

import (
	"context"
	"fmt"
	"iter"
	"slices"
)

// The history of a fork is read through its parent: the parent's events
// up to the fork, then the fork's own. Nothing is copied. A copy would
// have to be numbered anew (Pos is the stream's order, so copies would
// come after everything else), would be delivered live a second time and
// would double the journal for every fork; read through, every event
// keeps the one Pos, key and Seq it was delivered with, and a subscriber's
// cursor means the same thing in both sessions.
//
// Where the parent's share ends needs no number of its own: Fork holds
// the parent's turns off while it runs, and the fork's first event (its
// session event) is queued after every event the parent had queued. The
// parent's inherited events are therefore exactly those with a Pos below
// the fork's first event, whose own Pos is the smallest of the fork's.
// A grandparent's share ends, the same way, at the parent's first event.

// maxForkDepth bounds the chain of parents followed, so records that name
// each other in a loop cannot stall a reader.
const maxForkDepth = 64

// lineage is the chain of sessions whose events a fork's history shows:
// keys[0] is the oldest ancestor, the fork itself last. cuts[i] is the
// Pos of the first event of keys[i+1]: keys[i]'s events below it are
// inherited. A cut of 0 is not known yet: keys[i+1] has had no event
// numbered, so every event of keys[i] seen so far comes before it, and
// the first event of keys[i+1] that a reader meets in Pos order sets it.
// turns[i] is the last turn of keys[i] that keys[i+1] holds (its
// ForkOrigin.AfterTurn): a fork from before an earlier turn inherits
// nothing of that turn or later ones.
type lineage struct {
	keys  []string
	cuts  []uint64
	turns []uint64
}

// admit reports whether ev belongs to the history, learning the cut of
// its key's parent from the first event of its key. It sees events in Pos
// order.
func (l *lineage) admit(ev *Event) bool {
	i := slices.Index(l.keys, ev.Key)
	if i < 0 {
		return false
	}
	if i > 0 && l.cuts[i-1] == 0 {
		l.cuts[i-1] = ev.Pos
	}
	if i == len(l.keys)-1 {
		return true
	}
	return (l.cuts[i] == 0 || ev.Pos < l.cuts[i]) && ev.Turn <= l.turns[i]
}

// lineageOf returns the lineage of key, or nil when key is no fork.
// origin finds the fork origin of a key; first the Pos of a key's first
// event (0 when none is numbered yet).
func lineageOf(ctx context.Context, key string, origin func(context.Context, string) (*ForkOrigin, error),
	first func(context.Context, string) (uint64, error)) (*lineage, error) {
	keys := []string{key}
	var turns []uint64 // turns[0] is that of keys[0], as keys grows at the front
	for len(keys) <= maxForkDepth {
		o, err := origin(ctx, keys[0])
		if err != nil {
			return nil, fmt.Errorf("bridge: reading the fork origin of session %s: %w", keys[0], err)
		}
		if o == nil || o.Parent == "" || slices.Contains(keys, o.Parent) {
			break
		}
		keys = slices.Insert(keys, 0, o.Parent)
		turns = slices.Insert(turns, 0, o.AfterTurn)
	}
	if len(keys) == 1 {
		return nil, nil
	}
	l := &lineage{keys: keys, cuts: make([]uint64, len(keys)-1), turns: turns}
	for i := range l.cuts {
		pos, err := first(ctx, keys[i+1])
		if err != nil {
			return nil, fmt.Errorf("bridge: reading the first event of session %s: %w", keys[i+1], err)
		}
		l.cuts[i] = pos
	}
	return l, nil
}

// journalOrigin reads a key's fork origin from j's record of it.
func journalOrigin(j Journal) func(context.Context, string) (*ForkOrigin, error) {
	return func(ctx context.Context, key string) (*ForkOrigin, error) {
		rec, ok, err := j.LoadSession(ctx, key)
		if err != nil || !ok {
			return nil, err
		}
		return rec.Fork, nil
	}
}

// firstPos returns the Pos of key's first event: from the journal when
// there is one (it holds every event the ring does), else from the ring.
func (h *hub) firstPos(ctx context.Context, key string) (uint64, error) {
	if h.journal != nil {
		evs, err := h.journal.ReadEvents(ctx, EventQuery{Key: key, Limit: 1})
		if err != nil || len(evs) == 0 {
			return 0, err
		}
		return evs[0].Pos, nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for i := range h.n {
		if ev := &h.ring[(h.start+i)%len(h.ring)]; ev.Key == key {
			return ev.Pos, nil
		}
	}
	return 0, nil
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
