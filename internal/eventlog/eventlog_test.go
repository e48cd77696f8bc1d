package eventlog

import (
	"testing"
	"time"
)

// TestWaitFor: an event already logged is found at once, one added later
// wakes the waiter, and every event is offered to match once, in order.
func TestWaitFor(t *testing.T) {
	l := New[int]()
	l.Add(1)
	if ev, ok := l.WaitFor(time.Second, func(e int) bool { return e == 1 }); !ok || ev != 1 {
		t.Fatalf("logged event: %d %v", ev, ok)
	}
	go func() {
		l.Add(2)
		l.Add(3)
	}()
	var offered []int
	ev, ok := l.WaitFor(10*time.Second, func(e int) bool { offered = append(offered, e); return e == 3 })
	if !ok || ev != 3 || len(offered) != 3 || offered[0] != 1 || offered[1] != 2 {
		t.Fatalf("got %d %v, offered %v", ev, ok, offered)
	}
	if _, ok := l.WaitFor(time.Millisecond, func(e int) bool { return e == 4 }); ok {
		t.Fatal("found an event never added")
	}
	if got := l.Snapshot(); len(got) != 3 {
		t.Fatalf("snapshot %v", got)
	}
}
