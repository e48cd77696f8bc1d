package acpclient

// readBatch is what the read loop has decoded but not yet queued: the
// notifications of lines it already held in its buffer, handed to the
// queue together (queue.pushRun), so a streamed chunk does not pay for a
// lock, a budget charge and a wake-up of its own. It belongs to the read
// goroutine.
//
// A batch is handed on before the read loop may block on the agent (no
// complete line buffered), when it is full, and with any message that is
// not a notification: a request or a response's marker goes at once,
// behind the notifications before it, so nothing the agent waits for is
// held back, and a batch never waits for more input.
type readBatch struct {
	run   []*inbound
	bytes int
	// tight counts down the flushes that still hand on one message each
	// since a flush had to wait for room: under backpressure (many agents
	// sharing a budget) a batch held back is memory no budget counts, and
	// nothing is saved while the reader waits anyway.
	tight int
}

// A batch holds at most maxReadBatch messages or maxReadBatchBytes (as
// queuedSize counts them), and one message for tightFlushes flushes after
// a flush waited for room. The memory a batch holds is not yet counted by
// the budget: with 200 agents under backpressure, batches of 16 held about
// 10 MiB more live heap than single messages, for nothing, while a lone
// agent whose host keeps up reads 1.2–1.3 times faster in batches.
const (
	maxReadBatch      = 16
	maxReadBatchBytes = 16 << 10
	tightFlushes      = 64
)

// enqueue queues m behind what the read loop decoded before it, in a
// batch while more lines are buffered.
func (c *Conn) enqueue(m *inbound) {
	b := &c.batch
	b.run = append(b.run, m)
	b.bytes += m.size
	if b.tight > 0 || m.req != nil || m.settle != nil || len(b.run) >= maxReadBatch || b.bytes >= maxReadBatchBytes {
		c.flushBatch()
	}
}

// flushBatch hands the batch to the queue, waiting for room as a push does.
func (c *Conn) flushBatch() {
	b := &c.batch
	if len(b.run) == 0 {
		return
	}
	if c.queue.pushRun(b.run) {
		b.tight = tightFlushes
	} else if b.tight > 0 {
		b.tight--
	}
	clear(b.run)
	b.run, b.bytes = b.run[:0], 0
}
