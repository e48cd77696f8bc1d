// Package eventlog is the part of a test's event recorder that does not
// depend on the event type: a log one goroutine appends to while a test
// waits for an entry. Package bridge's own tests and internal/bridgetest
// (which imports bridge, so bridge's tests cannot use it) share it.
package eventlog

import (
	"sync"
	"time"
)

// Log is an append-only list of events, safe for concurrent use.
type Log[E any] struct {
	mu      sync.Mutex
	events  []E
	changed chan struct{}
}

// New returns an empty Log.
func New[E any]() *Log[E] { return &Log[E]{changed: make(chan struct{})} }

// Add appends ev and wakes the waiters.
func (l *Log[E]) Add(ev E) {
	l.mu.Lock()
	l.events = append(l.events, ev)
	close(l.changed)
	l.changed = make(chan struct{})
	l.mu.Unlock()
}

// Since returns the events from index seen on, and a channel closed at the
// next Add.
func (l *Log[E]) Since(seen int) ([]E, <-chan struct{}) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]E(nil), l.events[seen:]...), l.changed
}

// Snapshot returns the events so far.
func (l *Log[E]) Snapshot() []E {
	events, _ := l.Since(0)
	return events
}

// WaitFor returns the first event, from the start of the log, that
// matches match, waiting up to timeout for it to arrive; ok is false when
// none did. match sees the events in order, once each.
func (l *Log[E]) WaitFor(timeout time.Duration, match func(E) bool) (ev E, ok bool) {
	deadline := time.After(timeout)
	seen := 0
	for {
		events, changed := l.Since(seen)
		for _, ev := range events {
			if match(ev) {
				return ev, true
			}
		}
		seen += len(events)
		select {
		case <-changed:
		case <-deadline:
			return ev, false
		}
	}
}
