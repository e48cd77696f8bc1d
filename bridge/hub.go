package bridge

import (
	"context"
	"sync"
)

// The Host's ring of the newest published events, which subscribers
// (subscribe.go) read from and wait on.

// defaultSubscriberTail is how many of the newest events a Host keeps in
// memory for subscribers (HostOptions.SubscriberTail).
const defaultSubscriberTail = 4096

// defaultSubscriberTailBytes bounds the memory of that tail
// (HostOptions.SubscriberTailBytes): events merged while the consumer
// lagged can be large.
const defaultSubscriberTailBytes = 8 << 20

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
		tail = defaultSubscriberTail
	}
	if maxBytes <= 0 {
		maxBytes = defaultSubscriberTailBytes
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
