package bridge

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"sync"
)

// DefaultSubscriberTail is how many of the newest events a Host keeps in
// memory for subscribers (HostOptions.SubscriberTail).
const DefaultSubscriberTail = 4096

// DefaultSubscriberTailBytes bounds the memory of that tail
// (HostOptions.SubscriberTailBytes): events merged while the consumer
// lagged can be large.
const DefaultSubscriberTailBytes = 8 << 20

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

// hub holds the newest published events in a ring and wakes subscribers;
// publishing never waits for them.
type hub struct {
	journal Journal // history beyond the ring, when set

	mu       sync.Mutex
	ring     []Event // grows as events come, up to tail
	tail     int
	start    int // index of the oldest event
	n        int // events held
	bytes    int // eventBytes of the events held
	maxBytes int
	closed   bool
	changed  chan struct{} // closed and replaced at every publish and at close
}

func newHub(tail, maxBytes int, journal Journal) *hub {
	if tail <= 0 {
		tail = DefaultSubscriberTail
	}
	if maxBytes <= 0 {
		maxBytes = DefaultSubscriberTailBytes
	}
	return &hub{journal: journal, tail: tail, maxBytes: maxBytes, changed: make(chan struct{})}
}

// firstRingEvents is the ring's first size. A Host that has published
// little holds little: the whole tail, thousands of events of a few
// hundred bytes each, was once allocated by every NewHost.
const firstRingEvents = 64

// makeRoom makes room for one more event: it grows a full ring that is
// below its tail, else drops the oldest event. Called with mu held.
func (h *hub) makeRoom() {
	if h.n < len(h.ring) {
		return
	}
	if len(h.ring) >= h.tail {
		h.dropOldest()
		return
	}
	grown := make([]Event, min(max(2*len(h.ring), firstRingEvents), h.tail))
	for i := range h.n {
		grown[i] = h.ring[(h.start+i)%len(h.ring)]
	}
	h.ring, h.start = grown, 0
}

// publish adds a numbered batch, dropping the oldest events past the
// ring's size or bytes (the newest is always kept).
func (h *hub) publish(batch []Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, ev := range batch {
		h.makeRoom()
		h.ring[(h.start+h.n)%len(h.ring)] = ev
		h.n++
		h.bytes += eventBytes(&ev)
		for h.n > 1 && h.bytes > h.maxBytes {
			h.dropOldest()
		}
	}
	close(h.changed)
	h.changed = make(chan struct{})
}

// dropOldest forgets the oldest event held. Called with mu held.
func (h *hub) dropOldest() {
	h.bytes -= eventBytes(&h.ring[h.start])
	h.ring[h.start] = Event{}
	h.start = (h.start + 1) % len(h.ring)
	h.n--
}

// close marks the end of the stream.
func (h *hub) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	close(h.changed)
	h.changed = make(chan struct{})
}

// view is what a subscriber learns from the ring in one look.
type view struct {
	events  []Event       // matching events after the cursor, oldest first
	scanned uint64        // Pos of the last event looked at (the cursor if none)
	behind  bool          // events after the cursor have left the ring
	oldest  uint64        // Pos of the oldest event held, 0 when empty
	closed  bool          // nothing more will be published
	changed chan struct{} // closes at the next publish
}

// look copies up to max matching events with Pos after after.
func (h *hub) look(after uint64, c Cursor, max int) view { return h.lookMatch(after, c.matches, max) }

// lookMatch is look for events that match says to copy.
func (h *hub) lookMatch(after uint64, match func(*Event) bool, max int) view {
	h.mu.Lock()
	defer h.mu.Unlock()
	v := view{scanned: after, closed: h.closed, changed: h.changed}
	if h.n == 0 {
		return v
	}
	v.oldest = h.ring[h.start].Pos
	if after+1 < v.oldest {
		v.behind = true
		return v
	}
	// Positions in the ring are contiguous, so the cursor maps to an index.
	for i := int(after + 1 - v.oldest); i < h.n && len(v.events) < max; i++ {
		ev := &h.ring[(h.start+i)%len(h.ring)]
		v.scanned = ev.Pos
		if match(ev) {
			v.events = append(v.events, *ev)
		}
	}
	return v
}

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
