package bridge

import (
	"context"
	"fmt"
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
