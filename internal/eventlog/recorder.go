package eventlog

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/acphost/acphost/internal/waitfor"
)

// Recorder reads a stream of events (a Host's) into a Log for a test,
// until the stream is closed.
type Recorder[E any] struct {
	t        *testing.T
	log      *Log[E]
	describe func(E) string
	done     chan struct{}

	mu     sync.Mutex
	onEach func(E) // see OnEach
}

// Record starts reading events; describe renders one for failure
// messages.
func Record[E any](t *testing.T, events <-chan E, describe func(E) string) *Recorder[E] {
	r := &Recorder[E]{t: t, log: New[E](), describe: describe, done: make(chan struct{})}
	go func() {
		defer close(r.done)
		for ev := range events {
			r.log.Add(ev)
			r.mu.Lock()
			each := r.onEach
			r.mu.Unlock()
			if each != nil {
				each(ev)
			}
		}
	}()
	return r
}

// OnEach has f called with every event from now on, as it arrives (to
// answer permission requests).
func (r *Recorder[E]) OnEach(f func(E)) {
	r.mu.Lock()
	r.onEach = f
	r.mu.Unlock()
}

// Log returns the events read so far, and the ones to come.
func (r *Recorder[E]) Log() *Log[E] { return r.log }

// Done is closed once the stream has closed and every event is logged.
func (r *Recorder[E]) Done() <-chan struct{} { return r.done }

// Snapshot returns the events so far.
func (r *Recorder[E]) Snapshot() []E { return r.log.Snapshot() }

// WaitFor waits until an event matching match has arrived and returns
// it; the test fails, listing the events, when none does within
// waitfor.Bound.
func (r *Recorder[E]) WaitFor(desc string, match func(E) bool) E {
	r.t.Helper()
	ev, ok := r.log.WaitFor(waitfor.Bound, match)
	if !ok {
		r.t.Fatalf("waited %v for %s; events: %s", waitfor.Bound, desc, r.Summary())
	}
	return ev
}

// Summary renders the events so far, one a line, for failure messages.
func (r *Recorder[E]) Summary() string {
	var b strings.Builder
	for _, ev := range r.Snapshot() {
		fmt.Fprintf(&b, "\n  %s", r.describe(ev))
	}
	return b.String()
}
