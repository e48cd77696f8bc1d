package acpclient

import (
	"encoding/json"
	"slices"
	"sync"

	"github.com/acphost/acphost/internal/wire"
)

// inbound is one message from the agent waiting for the dispatch goroutine.
type inbound struct {
	method string
	id     json.RawMessage // nil for a notification
	params json.RawMessage
	update *SessionNotification // session/update, already decoded
	delta  *wire.TextDelta      // or a text delta, for a wire.Receiver
	src    rawSource            // where the update's raw bytes are, for a wire.Receiver
	size   int
	req    *inboundRequest // requests only
	settle func()          // a response marker: run in stream order
	reject *Error          // a malformed request: answered with this
	seq    uint64          // its place in the stream, from 1
	boxed  boxKind         // it lives in a box (chunkBox, deltaEntry): reusable once delivered in a run
}

// queuedOverhead is what a queued message holds besides its line's bytes:
// the inbound entry and, for a session/update, the notification and its
// update values (a chunk's box, see chunkBox, is 512 bytes).
const queuedOverhead = 512

// queuedSize is the memory a queued message of a line of n bytes holds,
// as the budgets count it: the bytes kept, plus decoded copies of them
// when decoding copied strings (decodedCopy), plus queuedOverhead.
func queuedSize(n int, decodedCopy bool) int {
	if decodedCopy {
		n *= 2
	}
	return n + queuedOverhead
}

// queue is the ordered hand-off between the read loop and the dispatch
// goroutine. The read loop only waits on it when more than maxBytes are
// queued (the host is not keeping up): that is backpressure onto the agent's
// stdout, never a drop. delivered counts the messages fully handled, so a
// call can wait until everything that arrived before its response was
// delivered. A message the dispatcher hands off (a file call, see
// fileCalls) is fully handled only when answered: until then it holds the
// count back, and its bytes count against the budget. With a shared
// QueueBudget, the bytes count against it too, by its fairness rule.
type queue struct {
	mu       sync.Mutex
	nonEmpty *sync.Cond
	hasRoom  *sync.Cond
	items    []*inbound
	head     int
	bytes    int
	maxBytes int
	budget   *QueueBudget // nil: only maxBytes bounds the queue
	// onWait, if set, runs on the pushing goroutine before push waits for
	// room: the read loop gives back buffers it need not hold meanwhile.
	onWait   func()
	closed   bool
	enqueued uint64
	handled  uint64   // messages the dispatcher is through with
	later    []uint64 // seqs of handed-off messages not yet answered, ascending
	// exempt counts dispatch-goroutine calls waiting on a response; while
	// one waits, the read loop must not block, or the response never comes.
	exempt  int
	waiters []queueWaiter
}

type queueWaiter struct {
	target uint64
	ch     chan struct{}
}

func newQueue(maxBytes int, budget *QueueBudget) *queue {
	q := &queue{maxBytes: maxBytes, budget: budget}
	q.nonEmpty = sync.NewCond(&q.mu)
	q.hasRoom = sync.NewCond(&q.mu)
	return q
}

// pushRun appends run in order under one lock, charging the QueueBudget
// once for what it admits at a time, and wakes the dispatcher once. It
// waits while the queue is over its byte budget or its share of the
// QueueBudget; what was admitted before a wait is handed on at once. One
// message is always admitted into an empty queue, however large. It
// reports whether it had to wait.
func (q *queue) pushRun(run []*inbound) (waited bool) {
	q.mu.Lock()
	for len(run) > 0 {
		n := q.admit(run)
		if n == 0 {
			q.nonEmpty.Signal() // the dispatcher must run for room to appear
			if q.onWait != nil {
				q.onWait()
			}
			q.hasRoom.Wait()
			waited = true
			continue
		}
		for _, m := range run[:n] {
			q.bytes += m.size
			q.enqueued++
			m.seq = q.enqueued
		}
		q.items = append(q.items, run[:n]...)
		run = run[n:]
	}
	q.mu.Unlock()
	q.nonEmpty.Signal()
	return waited
}

// admit returns how many messages from the start of run may be queued
// now, charging their bytes to the budget. Called with mu held.
func (q *queue) admit(run []*inbound) int {
	forced := 0 // admitted whatever the bounds say
	switch {
	case q.closed || q.exempt > 0:
		forced = len(run)
	case len(q.items)-q.head == 0:
		forced = 1
	}
	n, _ := fittingRun(run, forced, func(size int) bool { return q.bytes+size <= q.maxBytes })
	if q.budget == nil {
		return n
	}
	return q.budget.takeRun(q, q.bytes, forced, run[:n])
}

// fittingRun returns how many messages from the start of run fit, and
// their bytes: the first forced ones whatever fits says, then as many more
// as keep fits true of the bytes so far.
func fittingRun(run []*inbound, forced int, fits func(size int) bool) (n, size int) {
	for _, m := range run[:forced] {
		size += m.size
	}
	for n = forced; n < len(run) && fits(size+run[n].size); n++ {
		size += run[n].size
	}
	return n, size
}

// releaseBytes returns m's bytes to the queue and the budget, records m
// as handled (or, handedOff, as answered) and lets the reader go on.
func (q *queue) releaseBytes(m *inbound, handedOff bool) {
	q.mu.Lock()
	held, budget := q.bytes, q.budget
	q.bytes -= m.size
	if !handedOff {
		q.handled++
	} else if i := slices.Index(q.later, m.seq); i >= 0 {
		q.later = slices.Delete(q.later, i, i+1)
	}
	q.release()
	q.mu.Unlock()
	q.hasRoom.Signal()
	if budget != nil {
		budget.give(held, m.size)
	}
}

// mark returns the number of messages enqueued so far.
func (q *queue) mark() uint64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.enqueued
}

// pop returns the next message, or false once the queue is closed and empty.
func (q *queue) pop() (*inbound, bool) {
	run, ok := q.popRun(nil, 1)
	if !ok {
		return nil, false
	}
	return run[0], true
}

// popRun waits for the next message and appends it to buf; when it is a
// session/update notification, so are those right behind it that are
// too, up to max in all. Any other message comes alone. It returns false
// once the queue is closed and empty.
func (q *queue) popRun(buf []*inbound, max int) ([]*inbound, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for q.head == len(q.items) {
		if q.closed {
			return buf, false
		}
		q.nonEmpty.Wait()
	}
	first := len(buf)
	for len(buf)-first < max && q.head < len(q.items) {
		m := q.items[q.head]
		if len(buf) > first && !m.isUpdate() {
			break
		}
		buf = append(buf, m)
		q.items[q.head] = nil
		q.head++
		if !m.isUpdate() {
			break
		}
	}
	if q.head == len(q.items) {
		q.items, q.head = q.items[:0], 0
	}
	return buf, true
}

// isUpdate reports whether m is a decoded session/update notification.
func (m *inbound) isUpdate() bool {
	return (m.update != nil || m.delta != nil) && m.req == nil && m.settle == nil
}

// doneRun records that a run from popRun has been handled: done for each
// message, under one lock.
func (q *queue) doneRun(run []*inbound) {
	size := 0
	for _, m := range run {
		size += m.size
	}
	q.mu.Lock()
	held, budget := q.bytes, q.budget
	q.bytes -= size
	q.handled += uint64(len(run))
	q.release()
	q.mu.Unlock()
	q.hasRoom.Signal()
	if budget != nil {
		budget.give(held, size)
	}
}

// done records that m has been handled.
func (q *queue) done(m *inbound) {
	q.releaseBytes(m, false)
}

// handOff records that the dispatcher passed m on, to be answered later
// (finishLater).
func (q *queue) handOff(m *inbound) {
	q.mu.Lock()
	q.handled++
	q.later = append(q.later, m.seq)
	q.mu.Unlock()
}

// finishLater records that a handed-off m has been answered.
func (q *queue) finishLater(m *inbound) {
	q.releaseBytes(m, true)
}

// delivered is how many messages, from the first, are fully handled.
// Called with mu held.
func (q *queue) delivered() uint64 {
	if len(q.later) > 0 {
		return q.later[0] - 1
	}
	return q.handled
}

// release wakes the waiters whose target is delivered. Called with mu held.
func (q *queue) release() {
	if len(q.waiters) == 0 {
		return
	}
	delivered := q.delivered()
	kept := q.waiters[:0]
	for _, w := range q.waiters {
		if w.target <= delivered {
			close(w.ch)
		} else {
			kept = append(kept, w)
		}
	}
	q.waiters = kept
}

// reached returns a channel closed once target messages have been delivered
// (or the queue has shut down).
func (q *queue) reached(target uint64) <-chan struct{} {
	ch := make(chan struct{})
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.delivered() >= target || (q.closed && q.head == len(q.items) && len(q.later) == 0) {
		close(ch)
		return ch
	}
	q.waiters = append(q.waiters, queueWaiter{target, ch})
	return ch
}

// setExempt adjusts the count of dispatch-goroutine calls in flight.
func (q *queue) setExempt(delta int) {
	q.mu.Lock()
	q.exempt += delta
	q.mu.Unlock()
	q.hasRoom.Broadcast()
}

// close stops accepting waits; the dispatcher drains what is queued.
func (q *queue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.nonEmpty.Broadcast()
	q.hasRoom.Broadcast()
}

// finish releases every waiter and gives back to the budget what is still
// charged (handed-off messages never answered); called when the dispatcher
// has exited.
func (q *queue) finish() {
	q.mu.Lock()
	for _, w := range q.waiters {
		close(w.ch)
	}
	q.waiters = nil
	held, budget := q.bytes, q.budget
	q.budget = nil // later answers have nothing to give back
	q.mu.Unlock()
	if budget != nil {
		budget.forget(q)
		budget.give(held, held)
	}
}
