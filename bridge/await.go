package bridge

import (
	"context"
	"fmt"
)

// Making a request wait on the user: registered with its session (or its
// bridge), its turn's watchdog paused, its answer reported as a decision
// event. The request itself is userrequest.go's.

// reporter returns the function that emits decision events for requests
// of s, or agent-wide ones when s is nil.
func (b *Bridge) reporter(s *Session) func(Decision) {
	return func(d Decision) {
		ev := Event{Kind: KindDecision, Decision: &d}
		if s != nil {
			s.emit(ev)
			return
		}
		b.emit(ev)
	}
}

// await makes w wait on the user: it is registered with s (or with the
// bridge for a request outside any session) so that a cancelled or ended
// turn and Bridge.Close abandon it, s's running turn's watchdog is paused
// until the answer, and the end of ctx (the agent gave up, the connection
// closed) abandons it too. Its answer is reported as a decision event.
// Call it before the request's event is emitted.
func (b *Bridge) await(ctx context.Context, s *Session, id string, w waiter) {
	reg := &b.pending
	var dog *watchdog
	if s != nil {
		reg, dog = &s.pending, s.turns.watchdog()
	}
	if dog != nil {
		dog.pause()
	}
	r := w.base()
	r.report = b.reporter(s)
	r.release = func() {
		reg.remove(id)
		if dog != nil {
			dog.resume()
		}
	}
	reg.add(id, w)
	go func() {
		select {
		case <-ctx.Done():
			w.abandon(fmt.Errorf("%w: %w", errWithdrawn, ctx.Err()))
		case <-r.done:
		}
	}()
}
