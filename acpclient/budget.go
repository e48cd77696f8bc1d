package acpclient

import "sync"

// QueueBudget bounds the received, undelivered agent output of many Conns
// together (ConnOptions.Budget): a host running many agents keeps one bound
// on their sum instead of one per agent. Like MaxQueuedBytes, it is
// backpressure, never loss: a Conn that may not queue a message stops
// reading until it may, and the agent waits on its stdout.
//
// The fairness rule: a Conn with nothing queued may always queue one
// message, however large, so every agent makes progress and a line bigger
// than any share cannot deadlock; beyond that, a Conn may hold at most the
// budget divided by the number of Conns that have output queued, and only
// while the sum stays within the budget. An agent flooding alone may use
// the whole budget (up to its own MaxQueuedBytes); when others start, its
// share shrinks and it reads no more until it has delivered below it. The
// sum can pass the budget only by those first messages, one per Conn.
//
// A QueueBudget is safe for concurrent use; share one among any number of
// Conns.
type QueueBudget struct {
	mu      sync.Mutex
	max     int
	used    int
	busy    int // queues holding bytes
	waiters map[*queue]struct{}
}

// NewQueueBudget returns a budget of maxBytes shared by the Conns given it.
// maxBytes <= 0 means 64 MiB.
func NewQueueBudget(maxBytes int) *QueueBudget {
	if maxBytes <= 0 {
		maxBytes = 64 << 20
	}
	return &QueueBudget{max: maxBytes, waiters: map[*queue]struct{}{}}
}

// Used returns how many bytes the Conns sharing the budget hold queued now.
func (b *QueueBudget) Used() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

// takeRun charges for q, which holds held bytes already, the longest
// start of run the fairness rule allows, the first forced messages
// whatever it says (a queue's first message), and returns its length. If
// it refuses any of run, q is woken (its hasRoom broadcast) when room may
// have appeared. Called with q.mu held.
func (b *QueueBudget) takeRun(q *queue, held, forced int, run []*inbound) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	busy := b.busy
	if held == 0 {
		busy++ // q would be busy too
	}
	n, size := fittingRun(run, forced, func(size int) bool { return held+size <= b.max/busy && b.used+size <= b.max })
	if n < len(run) {
		b.waiters[q] = struct{}{}
	}
	b.chargeLocked(held, size)
	return n
}

func (b *QueueBudget) chargeLocked(held, size int) {
	if held == 0 && size > 0 {
		b.busy++
	}
	b.used += size
}

// give returns size of the held bytes of a queue and wakes the queues
// waiting for room when enough appeared: an eighth of the budget free, or
// a queue emptied (the shares grew). Called without any queue's lock, as
// waking takes theirs.
func (b *QueueBudget) give(held, size int) {
	if size <= 0 {
		return
	}
	b.mu.Lock()
	b.used -= size
	emptied := held == size
	if emptied {
		b.busy--
	}
	var wake []*queue
	if len(b.waiters) > 0 && (emptied || b.max-b.used >= b.max/8) {
		for q := range b.waiters {
			wake = append(wake, q)
		}
		clear(b.waiters)
	}
	b.mu.Unlock()
	for _, q := range wake {
		// Locking q first means its reader is inside Wait, or has not yet
		// checked the budget and will see the room: no wake-up is lost.
		q.mu.Lock()
		q.hasRoom.Broadcast()
		q.mu.Unlock()
	}
}

// forget drops q from the waiters when it stops reading.
func (b *QueueBudget) forget(q *queue) {
	b.mu.Lock()
	delete(b.waiters, q)
	b.mu.Unlock()
}
