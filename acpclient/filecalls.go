package acpclient

import (
	"context"
	"sync"
)

// fileCalls serves the agent's fs/read_text_file and fs/write_text_file
// requests off the dispatch goroutine, so a slow file root (SFTP: a network
// round trip per call) never holds up the agent's updates.
//
// They run one at a time, in the order the agent sent them, on a single
// worker that exists only while there is work. One worker, not one per
// path: the agent sees exactly the order it saw when they ran on the
// dispatch goroutine (a write followed by a read of the same file, or of a
// file the write affects through a link, reads what was written), and a
// slow root costs at most one goroutine per connection. What waits for the
// worker is bounded by the queue's byte budget: a file call's bytes count
// until it is answered.
type fileCalls struct {
	mu      sync.Mutex
	pending []func()
	running bool
	worker  sync.WaitGroup
}

// add runs job after every job added before it.
func (f *fileCalls) add(job func()) {
	f.mu.Lock()
	f.pending = append(f.pending, job)
	start := !f.running
	f.running = true
	f.mu.Unlock()
	if start {
		f.worker.Go(f.run)
	}
}

func (f *fileCalls) run() {
	for {
		f.mu.Lock()
		if len(f.pending) == 0 {
			f.running, f.pending = false, nil
			f.mu.Unlock()
			return
		}
		job := f.pending[0]
		f.pending[0] = nil
		f.pending = f.pending[1:]
		f.mu.Unlock()
		job()
	}
}

// wait returns once every job added so far has run. Only the dispatch
// goroutine adds jobs, so it may call wait (and so may anyone once it has
// ended) without racing a new worker.
func (f *fileCalls) wait() { f.worker.Wait() }

// isFileCall reports whether a message from the agent is served by
// fileCalls.
func isFileCall(m *inbound) bool {
	return m.req != nil && (m.method == "fs/read_text_file" || m.method == "fs/write_text_file")
}

// handOff passes a file call to the worker; the queue counts it delivered
// only once it has been answered.
func (c *Conn) handOff(ctx context.Context, m *inbound) {
	c.queue.handOff(m)
	c.files.add(func() {
		c.deliver(ctx, m)
		c.queue.finishLater(m)
	})
}
