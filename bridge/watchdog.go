package bridge

import (
	"sync"
	"time"
)

// DefaultInactivityTimeout is how long a turn may go without any sign of
// life from the agent before the bridge cancels it. There is no limit on a
// turn's total length.
const DefaultInactivityTimeout = 10 * time.Minute

// defaultCancelGrace is how long a timed-out turn is given to settle after
// session/cancel before the agent process is killed.
const defaultCancelGrace = 10 * time.Second

// watchdog fires when a turn has been silent for timeout. Activity only
// records a time (it runs for every streamed chunk); a single timer checks,
// when it fires, whether the silence really lasted and re-arms otherwise.
// While paused (a request waits on the user, see userRequest) time does not
// count.
type watchdog struct {
	clock    Clock
	timeout  time.Duration
	onExpire func()

	mu      sync.Mutex
	last    time.Time
	paused  int
	timer   Timer
	stopped bool
}

func startWatchdog(clock Clock, timeout time.Duration, onExpire func()) *watchdog {
	w := &watchdog{clock: clock, timeout: timeout, onExpire: onExpire, last: clock.Now()}
	w.mu.Lock()
	w.armLocked(timeout)
	w.mu.Unlock()
	return w
}

func (w *watchdog) armLocked(d time.Duration) {
	w.timer = w.clock.AfterFunc(d, w.check)
}

// check runs when the timer fires.
func (w *watchdog) check() {
	w.mu.Lock()
	if w.stopped || w.paused > 0 {
		w.mu.Unlock()
		return
	}
	idle := w.clock.Now().Sub(w.last)
	if idle < w.timeout {
		w.armLocked(w.timeout - idle)
		w.mu.Unlock()
		return
	}
	w.stopped = true
	w.mu.Unlock()
	w.onExpire()
}

// kick records activity seen at the time at. A time before the last
// activity (a run of updates read the clock once, before a resume did)
// changes nothing.
func (w *watchdog) kick(at time.Time) {
	w.mu.Lock()
	if at.After(w.last) {
		w.last = at
	}
	w.mu.Unlock()
}

// pause stops the clock while the user decides; resume restarts it with a
// full timeout.
func (w *watchdog) pause() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.paused++
	if w.paused == 1 && w.timer != nil {
		w.timer.Stop()
	}
}

func (w *watchdog) resume() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.paused == 0 {
		return
	}
	w.paused--
	if w.paused == 0 && !w.stopped {
		w.last = w.clock.Now()
		w.armLocked(w.timeout)
	}
}

// stop ends the watchdog; it will not fire afterwards.
func (w *watchdog) stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stopped = true
	if w.timer != nil {
		w.timer.Stop()
	}
}
