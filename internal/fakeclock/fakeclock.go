// Package fakeclock is a manually advanced clock for tests of code that
// waits (watchdogs, timeouts), so no test sleeps for real.
package fakeclock

import (
	"sort"
	"sync"
	"time"
)

// Clock is a fake clock. Its zero value is not usable; call New.
type Clock struct {
	mu      sync.Mutex
	now     time.Time
	timers  []*Timer
	changed chan struct{} // closed and replaced whenever a timer is added
}

// Timer is a pending call registered with AfterFunc.
type Timer struct {
	c       *Clock
	when    time.Time
	f       func()
	stopped bool
}

// New returns a clock set to a fixed instant.
func New() *Clock {
	return &Clock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), changed: make(chan struct{})}
}

// Now returns the fake time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// AfterFunc registers f to run, in its own goroutine, once the clock has
// been advanced by d.
func (c *Clock) AfterFunc(d time.Duration, f func()) interface{ Stop() bool } {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &Timer{c: c, when: c.now.Add(d), f: f}
	c.timers = append(c.timers, t)
	close(c.changed)
	c.changed = make(chan struct{})
	return t
}

// Stop cancels the timer; it reports whether it was still pending.
func (t *Timer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	if t.stopped {
		return false
	}
	t.stopped = true
	return true
}

// Advance moves the clock forward and runs every timer that came due, in
// time order.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	var due []*Timer
	kept := c.timers[:0]
	for _, t := range c.timers {
		switch {
		case t.stopped:
		case !t.when.After(c.now):
			t.stopped = true
			due = append(due, t)
		default:
			kept = append(kept, t)
		}
	}
	c.timers = kept
	c.mu.Unlock()
	sort.Slice(due, func(i, j int) bool { return due[i].when.Before(due[j].when) })
	for _, t := range due {
		go t.f()
	}
}

// Pending returns how many timers are waiting.
func (c *Clock) Pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, t := range c.timers {
		if !t.stopped {
			n++
		}
	}
	return n
}

// WaitForTimers blocks until at least n timers are pending or the timeout
// (real time) passes, and reports whether they are.
func (c *Clock) WaitForTimers(n int, timeout time.Duration) bool {
	deadline := time.After(timeout)
	for {
		c.mu.Lock()
		ch := c.changed
		c.mu.Unlock()
		if c.Pending() >= n {
			return true
		}
		select {
		case <-ch:
		case <-deadline:
			return c.Pending() >= n
		case <-time.After(5 * time.Millisecond):
		}
	}
}
