package bridge

import (
	"errors"
	"sync"

	"github.com/acphost/acphost/internal/wire"
)

// defaultMaxPendingEvents is how many undelivered events a Host holds before
// the agents producing them are slowed down.
const defaultMaxPendingEvents = 4096

// ErrJournal marks the error event a Host emits when its Journal fails to
// store events (or to say where its numbering ends): delivery goes on, but
// the journal may miss events until it recovers.
var ErrJournal = errors.New("bridge: journal failed")

const (
	// pumpBatch bounds how many waiting events the pump takes at once: one
	// journal transaction and one publication to subscribers.
	pumpBatch = 512
	// maxUnjournaled bounds the events kept for the next Append after one
	// failed, so a journal that stays broken cannot grow memory.
	maxUnjournaled = 4 * pumpBatch
)

// eventQueue holds a Host's events between the agents and the pump. When
// the pump lags, a text or thinking delta that continues the newest waiting
// event of the same session and message, or a piece of terminal output
// that continues the newest waiting one of its terminal, is merged into it
// instead of taking a place, and once max events, or maxBytes of them (as
// eventBytes counts), are waiting, producers block: the agent is slowed
// down and nothing is dropped. A merge grows an event, so it waits for
// room in bytes too. One event is always admitted into an empty queue,
// however large.
type eventQueue struct {
	mu       sync.Mutex
	changed  *sync.Cond
	events   []Event
	head     int
	max      int
	maxBytes int
	bytes    int      // eventBytes of the waiting events
	spares   [][]byte // merge buffers to reuse (see maxSpareBuffers)
	closed   bool
}

func newEventQueue(max, maxBytes int) *eventQueue {
	if max <= 0 {
		max = defaultMaxPendingEvents
	}
	if maxBytes <= 0 {
		maxBytes = defaultMaxQueuedBytes / 2
	}
	q := &eventQueue{max: max, maxBytes: maxBytes}
	q.changed = sync.NewCond(&q.mu)
	return q
}

// push appends ev, merging deltas and waiting for room as described above.
// It reports false when the queue is closed.
func (q *eventQueue) push(ev Event) bool { return q.pushPtr(&ev) }

// pushPtr is push taking the event by pointer, which spares the hot path a
// copy of the whole Event per call; ev is not kept.
func (q *eventQueue) pushPtr(ev *Event) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	for !q.closed {
		if appended, ok := q.admitLocked(ev); ok {
			if appended {
				q.changed.Broadcast()
			}
			return true
		}
		q.changed.Wait()
	}
	return false
}

// pushDeltas pushes the text deltas ds as events that are tmpl but for
// their kind, text and message id, under one lock for the whole run; tmpl
// is not kept. It reports false when the queue is closed.
func (q *eventQueue) pushDeltas(tmpl *Event, ds []wire.TextDelta) bool {
	ev := *tmpl // a local: filling it in needs no write barriers
	q.mu.Lock()
	defer q.mu.Unlock()
	woken := true // whether those waiting have heard of every event appended
	// into is the newest waiting event while the previous delta merged into
	// it: it matches tmpl, so a delta of its kind and message merges there
	// without mergeTarget's comparisons.
	var into *Event
	i := 0
	for i < len(ds) && !q.closed {
		d := &ds[i]
		ev.Kind, ev.Text, ev.MessageID = deltaKind(d.Kind), d.Text, d.MessageID
		if into != nil && into.Kind == ev.Kind && into.MessageID == ev.MessageID && q.mergeIntoLocked(into, &ev) {
			i++
			continue
		}
		into = nil
		if appended, ok := q.admitLocked(&ev); ok {
			if !appended {
				into = &q.events[len(q.events)-1] // mergeTarget is always the newest
			}
			woken = woken && !appended
			i++
			continue
		}
		if !woken { // the pump may be asleep on an empty queue it no longer is
			q.changed.Broadcast()
			woken = true
		}
		q.changed.Wait()
	}
	if !woken {
		q.changed.Broadcast()
	}
	return i == len(ds)
}

// admitLocked merges ev into the newest waiting event or appends it, as
// push describes; ok is false when ev must wait for room, and appended
// says whether ev took a place of its own.
func (q *eventQueue) admitLocked(ev *Event) (appended, ok bool) {
	if last := q.mergeTarget(ev); last != nil {
		return false, q.mergeIntoLocked(last, ev)
	}
	waiting, size := len(q.events)-q.head, eventBytes(ev)
	if waiting > 0 && (waiting >= q.max || q.bytes+size > q.maxBytes) {
		return false, false
	}
	q.events = append(q.events, *ev)
	q.bytes += size
	return true, true
}

// mergeIntoLocked merges ev into last, its merge target, if the bytes the
// merge adds fit; false means ev must wait for room.
func (q *eventQueue) mergeIntoLocked(last, ev *Event) bool {
	if q.bytes+q.mergeGrowth(last, ev) > q.maxBytes {
		return false
	}
	before := eventBytes(last)
	q.mergeLocked(last, ev)
	q.bytes += eventBytes(last) - before
	return true
}

// eventOverhead is what a waiting event costs besides its text and Raw: the
// Event value and the little it points to.
const eventOverhead = 512

// eventBytes estimates the memory a waiting event holds.
func eventBytes(ev *Event) int {
	n := eventOverhead + len(ev.Text) + len(ev.Raw) + cap(ev.mergedText)
	if ev.Terminal != nil {
		n += len(ev.Terminal.Data)
	}
	if ev.Content != nil {
		n += contentDataBytes(ev.Content)
	}
	return n
}

// mergeTarget returns the newest waiting event when the delta ev continues
// it, to be merged into it, or nil. Only the newest is considered, so no
// event overtakes another; events the pump has taken are no longer in the
// queue, so they are never changed. A lone waiting event is left alone: the
// pump is about to take it, and a stream that keeps up should show the
// agent's deltas as sent.
func (q *eventQueue) mergeTarget(ev *Event) *Event {
	if ev.Kind != KindText && ev.Kind != KindThinking && ev.Kind != KindTerminal || len(q.events)-q.head < 2 || ev.Content != nil {
		return nil
	}
	last := &q.events[len(q.events)-1]
	if last.Kind != ev.Kind || last.Content != nil || last.Bridge != ev.Bridge || last.Key != ev.Key || last.Session != ev.Session ||
		last.Turn != ev.Turn || last.MessageID != ev.MessageID || last.Replay != ev.Replay || last.Late != ev.Late {
		return nil
	}
	if ev.Kind == KindTerminal && !terminalMerges(last, ev) {
		return nil
	}
	return last
}

// mergeGrowth bounds what merging ev into last adds to eventBytes(last):
// a first merge takes a spare buffer that holds both, or a new one of
// twice what it must hold, and a buffer grows at most to twice that.
func (q *eventQueue) mergeGrowth(last, ev *Event) int {
	add, held := len(ev.Text), len(last.Text)
	if ev.Kind == KindTerminal {
		add, held = len(ev.Terminal.Data), len(last.Terminal.Data)
	}
	if last.mergedText == nil {
		if spare := q.spare(held + add); spare != nil {
			return cap(spare)
		}
		return 2 * (held + add)
	}
	if need := len(last.mergedText) + add; need > cap(last.mergedText) {
		return max(2*cap(last.mergedText), 2*need)
	}
	return 0
}

// Merge buffers are kept for reuse once the pump took their event, so a
// flood merges into memory it already has instead of growing a new buffer
// for every event: at most maxSpareBuffers of them, of at most
// maxSpareBuffer bytes each (what waits outside the queue's count).
const (
	maxSpareBuffers = 4
	maxSpareBuffer  = 64 << 10
)

// spare returns the newest kept merge buffer if it can hold n bytes.
func (q *eventQueue) spare(n int) []byte {
	if len(q.spares) == 0 || cap(q.spares[len(q.spares)-1]) < n {
		return nil
	}
	return q.spares[len(q.spares)-1]
}

// mergeBuffer returns an empty buffer that holds at least n bytes: the
// spare one, or a new one of twice n.
func (q *eventQueue) mergeBuffer(n int) []byte {
	if b := q.spare(n); b != nil {
		q.spares[len(q.spares)-1] = nil
		q.spares = q.spares[:len(q.spares)-1]
		return b[:0]
	}
	return make([]byte, 0, 2*n)
}

// keepSpare keeps a merge buffer whose contents were copied out.
func (q *eventQueue) keepSpare(b []byte) {
	if cap(b) <= maxSpareBuffer && len(q.spares) < maxSpareBuffers {
		q.spares = append(q.spares, b[:0])
	}
}

// mergeLocked folds ev into last, its mergeTarget.
func (q *eventQueue) mergeLocked(last, ev *Event) {
	if ev.Kind == KindTerminal {
		q.mergeTerminal(last, ev)
		return
	}
	// Appending to a buffer keeps a long run of merges linear; the text is
	// materialised when the pump takes the event.
	if last.mergedText == nil {
		last.mergedText = append(q.mergeBuffer(len(last.Text)+len(ev.Text)), last.Text...)
	}
	last.mergedText = append(last.mergedText, ev.Text...)
	last.Raw = nil // no single agent message carries the merged text
}

// mergeTerminal folds a piece of terminal output into the waiting one
// when both are output of the same terminal, shown in the same row, from
// the same source: not an exit, and not an event that carries Raw (the
// agent's message would be lost). A Reset piece replaces what it follows.
func (q *eventQueue) mergeTerminal(last, ev *Event) {
	a, b := last.Terminal, ev.Terminal
	if last.mergedText == nil {
		cp := *a // the producer's value is not changed: the merge owns a copy
		last.Terminal = &cp
		last.mergedText = append(q.mergeBuffer(len(a.Data)+len(b.Data)), a.Data...)
	}
	if b.Reset {
		last.mergedText = last.mergedText[:0]
		last.Terminal.Reset = true
	}
	last.mergedText = append(last.mergedText, b.Data...)
	last.Terminal.Truncated = last.Terminal.Truncated || b.Truncated
}

// terminalMerges reports whether mergeTerminal may fold ev into last.
func terminalMerges(last, ev *Event) bool {
	a, b := last.Terminal, ev.Terminal
	return a != nil && b != nil && a.Exit == nil && b.Exit == nil && last.Raw == nil && ev.Raw == nil &&
		a.ID == b.ID && a.Source == b.Source && a.ToolCallID == b.ToolCallID
}

// take waits for events and moves up to n of them, oldest first, onto buf.
// It returns nil once the queue is closed and empty.
func (q *eventQueue) take(buf []Event, n int) []Event {
	q.mu.Lock()
	defer q.mu.Unlock()
	for q.head == len(q.events) && !q.closed {
		q.changed.Wait()
	}
	if q.head == len(q.events) {
		return nil
	}
	// A batch takes at most a quarter of maxBytes (and one event at
	// least): what the pump holds is no longer counted, so a whole queue's
	// worth taken at once would double the bound.
	end, taken := min(q.head+n, len(q.events)), 0
	for i := q.head; i < end; i++ {
		if taken >= q.maxBytes/4 {
			end = i
			break
		}
		ev := q.events[i]
		size := eventBytes(&ev)
		q.bytes -= size
		taken += size
		if ev.mergedText != nil {
			if ev.Kind == KindTerminal {
				ev.Terminal.Data = string(ev.mergedText)
			} else {
				ev.Text = string(ev.mergedText)
			}
			q.keepSpare(ev.mergedText)
			ev.mergedText = nil
		}
		buf = append(buf, ev)
		q.events[i] = Event{}
	}
	q.head = end
	// Reclaim the taken prefix once it outweighs what waits, so the slice
	// stays bounded under a steady flood at amortised constant cost.
	if q.head >= len(q.events)-q.head {
		live := copy(q.events, q.events[q.head:])
		clear(q.events[live:])
		q.events, q.head = q.events[:live], 0
	}
	q.changed.Broadcast()
	return buf
}

// close stops accepting events and wakes everyone waiting.
func (q *eventQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.changed.Broadcast()
	q.mu.Unlock()
}
