// Package waitfor bounds the waits of tests: each wait fails the test,
// saying what it waited for, when it outlasts Bound, rather than blocking
// until the test binary's own timeout kills every test at once.
package waitfor

import (
	"context"
	"testing"
	"time"
)

// Bound is how long a wait may take before the test fails. It is generous
// for loaded machines: only a failing test ever waits it out, so it says
// nothing of how fast anything should be.
const Bound = time.Minute

// Closed waits for ch to be closed (or to deliver), failing the test
// with what when it takes longer than Bound.
func Closed[T any](tb testing.TB, ch <-chan T, what string) {
	tb.Helper()
	Recv(tb, ch, what)
}

// Recv waits for a value from ch and returns it, failing the test with
// what when none comes within Bound.
func Recv[T any](tb testing.TB, ch <-chan T, what string) T {
	tb.Helper()
	return recvWithin(tb, ch, Bound, what)
}

func recvWithin[T any](tb testing.TB, ch <-chan T, bound time.Duration, what string) T {
	tb.Helper()
	timer := time.NewTimer(bound)
	defer timer.Stop()
	select {
	case v := <-ch:
		return v
	case <-timer.C:
		tb.Fatalf("waited %v for %s", bound, what)
		var zero T
		return zero
	}
}

// Call runs f in a goroutine and waits for it to return, failing the test
// with what when it has not within Bound (f is then left running).
func Call(tb testing.TB, what string, f func()) {
	tb.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	Closed(tb, done, what)
}

// Until polls cond until it holds, failing the test with what when it
// does not within Bound.
func Until(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	for deadline := time.Now().Add(Bound); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			tb.Fatalf("waited %v for %s", Bound, what)
		}
	}
}

// Context returns a context that ends after Bound, or when the test ends:
// for calls that take one, so that they return with an error that says
// what they were doing.
func Context(tb testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), Bound)
	tb.Cleanup(cancel)
	return ctx
}
