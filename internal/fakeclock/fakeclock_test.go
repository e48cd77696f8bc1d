package fakeclock

import (
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestAdvanceFiresDueTimersOnly(t *testing.T) {
	c := New()
	fired := make(chan string, 3)
	c.AfterFunc(time.Minute, func() { fired <- "minute" })
	stopped := c.AfterFunc(2*time.Minute, func() { fired <- "stopped" })
	c.AfterFunc(time.Hour, func() { fired <- "hour" })
	if !stopped.Stop() || stopped.Stop() {
		t.Fatal("Stop should report true once")
	}
	if c.Pending() != 2 {
		t.Fatalf("pending %d", c.Pending())
	}
	c.Advance(59 * time.Second)
	select {
	case f := <-fired:
		t.Fatalf("%s fired early", f)
	case <-time.After(10 * time.Millisecond):
	}
	c.Advance(2 * time.Minute)
	if f := <-fired; f != "minute" {
		t.Fatalf("fired %s", f)
	}
	select {
	case f := <-fired:
		t.Fatalf("%s fired", f)
	case <-time.After(10 * time.Millisecond):
	}
	if !c.WaitForTimers(1, time.Second) || c.Now().Sub(New().Now()) != 179*time.Second {
		t.Fatalf("pending %d, now %v", c.Pending(), c.Now())
	}
}
