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
}

// A batch holds at most maxReadBatch messages or maxReadBatchBytes (as
// queuedSize counts them): what a dispatcher's run takes (maxUpdateRun),
// and little next to the queue's budget, so the dispatcher is never kept
// waiting for long.
const (
	maxReadBatch      = maxUpdateRun
	maxReadBatchBytes = 64 << 10
)

// enqueue queues m behind what the read loop decoded before it, in a
// batch while more lines are buffered.
func (c *Conn) enqueue(m *inbound) {
	b := &c.batch
	b.run = append(b.run, m)
	b.bytes += m.size
	if m.req != nil || m.settle != nil || len(b.run) >= maxReadBatch || b.bytes >= maxReadBatchBytes {
		c.flushBatch()
	}
}

// flushBatch hands the batch to the queue, waiting for room as a push does.
func (c *Conn) flushBatch() {
	b := &c.batch
	if len(b.run) == 0 {
		return
	}
	c.queue.pushRun(b.run)
	clear(b.run)
	b.run, b.bytes = b.run[:0], 0
}
