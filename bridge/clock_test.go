package bridge

import (
	"testing"
	"time"
)

// TestSystemClockIsReal: SystemClock tells the time, calls what AfterFunc
// is given, and stops what has not run.
func TestSystemClockIsReal(t *testing.T) {
	c := SystemClock()
	if d := time.Since(c.Now()); d < 0 || d > time.Minute {
		t.Fatalf("Now is %v away from time.Now", d)
	}
	fired := make(chan struct{})
	c.AfterFunc(time.Millisecond, func() { close(fired) })
	select {
	case <-fired:
	case <-time.After(10 * time.Second):
		t.Fatal("AfterFunc did not call f")
	}
	if !c.AfterFunc(time.Hour, func() { t.Error("a stopped timer fired") }).Stop() {
		t.Error("Stop of a pending timer reported it was not pending")
	}
}
