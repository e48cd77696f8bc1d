package bridge

import (
	"sync"
)

// DefaultMaxPendingEvents is how many undelivered events a Host holds before
// the agents producing them are slowed down.
const DefaultMaxPendingEvents = 4096

// eventQueue is a Host's single ordered stream. Producers (one per bridge
// and turn) append; one pump goroutine hands events to the consumer. When the
// consumer lags, a text or thinking delta that continues the newest queued
// event of the same session and message is merged into it instead of taking
// a place, and once max events are waiting, producers block: the agent is
// slowed down and nothing is dropped.
type eventQueue struct {
	mu      sync.Mutex
	changed *sync.Cond
	events  []Event
	head    int
	max     int
	closed  bool
	seq     map[seqKey]uint64
	out     chan Event
	stop    chan struct{} // closed to drop what is left and end the pump
	pumped  chan struct{}
}

type seqKey struct{ bridge, session string }

func newEventQueue(max int) *eventQueue {
	if max <= 0 {
		max = DefaultMaxPendingEvents
	}
	q := &eventQueue{max: max, seq: map[seqKey]uint64{}, out: make(chan Event),
		stop: make(chan struct{}), pumped: make(chan struct{})}
	q.changed = sync.NewCond(&q.mu)
	go q.pump()
	return q
}

// push appends ev, merging deltas and waiting for room as described above.
// It reports false when the queue is closed.
func (q *eventQueue) push(ev Event) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return false
	}
	if q.mergeLocked(ev) {
		return true
	}
	for len(q.events)-q.head >= q.max && !q.closed {
		q.changed.Wait()
	}
	if q.closed {
		return false
	}
	q.events = append(q.events, ev)
	q.changed.Broadcast()
	return true
}

// mergeLocked folds a delta into the newest waiting event when it continues
// it. Only the newest is considered, so no event overtakes another.
func (q *eventQueue) mergeLocked(ev Event) bool {
	if ev.Kind != KindText && ev.Kind != KindThinking {
		return false
	}
	// The oldest waiting event may already be in the pump's hands; merge
	// only into events strictly behind it.
	if len(q.events)-q.head < 2 {
		return false
	}
	last := &q.events[len(q.events)-1]
	if last.Kind != ev.Kind || last.Bridge != ev.Bridge || last.Session != ev.Session ||
		last.MessageID != ev.MessageID || last.Replay != ev.Replay || last.Late != ev.Late {
		return false
	}
	// Appending to a buffer keeps a long run of merges linear; the text is
	// materialised when the event is delivered.
	if last.mergedText == nil {
		last.mergedText = append(make([]byte, 0, 2*(len(last.Text)+len(ev.Text))), last.Text...)
	}
	last.mergedText = append(last.mergedText, ev.Text...)
	last.Raw = nil // no single agent message carries the merged text
	return true
}

// pump delivers events in order, numbering them per session.
func (q *eventQueue) pump() {
	defer close(q.pumped)
	defer close(q.out)
	for {
		q.mu.Lock()
		for q.head == len(q.events) && !q.closed {
			q.changed.Wait()
		}
		if q.head == len(q.events) {
			q.mu.Unlock()
			return
		}
		ev := q.events[q.head]
		if ev.mergedText != nil {
			ev.Text, ev.mergedText = string(ev.mergedText), nil
		}
		k := seqKey{ev.Bridge, ev.Session}
		q.seq[k]++
		ev.Seq = q.seq[k]
		q.mu.Unlock()

		select {
		case q.out <- ev:
		case <-q.stop:
			return
		}

		q.mu.Lock()
		q.events[q.head] = Event{}
		q.head++
		if q.head == len(q.events) {
			q.events, q.head = q.events[:0], 0
		}
		q.changed.Broadcast()
		q.mu.Unlock()
	}
}

// close stops accepting events; the pump delivers what is queued, then
// closes the output channel.
func (q *eventQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.changed.Broadcast()
	q.mu.Unlock()
}

// abandon drops undelivered events and ends the pump.
func (q *eventQueue) abandon() {
	q.close()
	select {
	case <-q.stop:
	default:
		close(q.stop)
	}
	<-q.pumped
}
