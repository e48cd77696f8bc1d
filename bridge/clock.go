package bridge

import "time"

// Clock is the time source of a Bridge: the watchdog and event times use it.
// Tests inject a fake one; the zero Config uses the real clock.
type Clock interface {
	Now() time.Time
	// AfterFunc calls f in its own goroutine after d.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a pending AfterFunc call.
type Timer interface {
	// Stop prevents the call; it reports whether it was still pending.
	Stop() bool
}

// SystemClock returns the real clock: what a Bridge uses when its Config
// names none, for packages that take a Clock too (such as journal).
func SystemClock() Clock { return realClock{} }

type realClock struct{}

func (realClock) Now() time.Time                            { return time.Now() }
func (realClock) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }
