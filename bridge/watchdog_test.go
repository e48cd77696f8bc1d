package bridge

import (
	"testing"
	"time"

	"github.com/acphost/acphost/internal/fakeclock"
)

// A kick with a time before the last activity (a run of updates stamped
// when its delivery began) does not move the watchdog's clock back: the
// turn expires a full timeout after the newest activity.
func TestWatchdogKickNeverGoesBack(t *testing.T) {
	clock := fakeClock{fakeclock.New()}
	expired := make(chan struct{})
	w := startWatchdog(clock, 10*time.Minute, func() { close(expired) })
	defer w.stop()
	clock.Advance(5 * time.Minute)
	newest := clock.Now()
	w.kick(newest)
	w.kick(newest.Add(-4 * time.Minute)) // stale
	clock.Advance(5 * time.Minute)       // the first check: re-armed for the rest
	if !clock.WaitForTimers(1, 5*time.Second) {
		t.Fatal("watchdog not re-armed")
	}
	clock.Advance(5*time.Minute - time.Second)
	select {
	case <-expired:
		t.Fatal("expired a full timeout after the stale kick, before one after the newest")
	case <-time.After(100 * time.Millisecond):
	}
	clock.Advance(2 * time.Second)
	select {
	case <-expired:
	case <-time.After(5 * time.Second):
		t.Fatal("not expired a full timeout after the newest activity")
	}
}
