package bridge

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/acphost/acphost/acpclient"
)

// The repair of a failed prompt, where the agent's profile allows it: a
// sign-in, a resend after a transient error before any output, one
// continue after output. The turn (turn.go) holds the failure and asks
// here what to send next.

// holdForRetry decides, on the dispatch goroutine, whether a failed prompt
// is repaired and sent again instead of ending the turn. It must not block.
func (tr *sessionTurns) holdForRetry(turn *turnState, err error) bool {
	s := tr.s
	p := s.b.provider
	s.mu.Lock()
	defer s.mu.Unlock()
	if turn.cancelled || turn.timedOut {
		return false
	}
	hold := false
	switch {
	case acpclient.IsAuthRequired(err):
		hold = !turn.emitted && turn.retries.auth < maxAuthRounds
	case p.TransientError != nil && p.TransientError(err):
		if turn.emitted {
			hold = !turn.retries.recovered && p.ContinuePrompt != ""
		} else {
			hold = turn.retries.transient < len(p.RetryBackoff)
		}
	}
	if hold {
		turn.held = err
	}
	return hold
}

// takeHeld returns and clears the failure held for a retry.
func (tr *sessionTurns) takeHeld(turn *turnState) error {
	s := tr.s
	s.mu.Lock()
	defer s.mu.Unlock()
	err := turn.held
	turn.held = nil
	return err
}

// recoverTurn repairs what made a prompt fail and returns the connection
// and content to send next: after a sign-in the same prompt (on a restarted
// process if the sign-in needed one); after a transient error before any
// output the same prompt once the backoff has passed; after output the
// provider's continue instruction, once per user turn.
func (tr *sessionTurns) recoverTurn(ctx context.Context, turn *turnState, held error, content []acpclient.ContentBlock) (*acpclient.Conn, []acpclient.ContentBlock, error) {
	s := tr.s
	p := s.b.provider
	s.mu.Lock()
	conn, emitted := turn.conn, turn.emitted
	s.mu.Unlock()
	if acpclient.IsAuthRequired(held) {
		s.mu.Lock()
		turn.retries.auth++
		s.mu.Unlock()
		_, err := s.b.signIn(ctx, s, "session/prompt", held) // pauses the watchdog while the user signs in
		if err != nil {
			return nil, nil, err
		}
		next, err := s.native.reattach(ctx)
		if err != nil {
			return nil, nil, err
		}
		s.mu.Lock()
		turn.conn = next
		s.mu.Unlock()
		return next, content, nil
	}
	if emitted {
		s.mu.Lock()
		turn.retries.recovered = true
		s.mu.Unlock()
		s.emit(Event{Kind: KindNotice, Text: fmt.Sprintf("The agent's backend failed mid-turn (%v); asking it to continue where it stopped.", held)})
		return conn, []acpclient.ContentBlock{acpclient.TextBlock(p.ContinuePrompt)}, nil
	}
	s.mu.Lock()
	n := turn.retries.transient
	turn.retries.transient++
	s.mu.Unlock()
	delay := p.RetryBackoff[n]
	s.emit(Event{Kind: KindNotice, Text: fmt.Sprintf("The agent's backend failed (%v); retrying in %v (attempt %d of %d).", held, delay, n+1, len(p.RetryBackoff))})
	if err := sleepClock(ctx, s.b.clock, delay, conn); err != nil {
		if errors.Is(err, acpclient.ErrClosed) {
			return nil, nil, fmt.Errorf("%w (while waiting to retry after: %v)", err, held)
		}
		return nil, nil, held
	}
	s.mu.Lock()
	cancelled := turn.cancelled
	s.mu.Unlock()
	if cancelled {
		return nil, nil, held
	}
	return conn, content, nil
}

// sleepClock waits d on clock, or until ctx ends, or until conn ends:
// nothing waited for on the agent can come once it is gone, so its end
// returns its exit error (acpclient.ErrClosed, wrapping the *ExitError with
// its stderr).
func sleepClock(ctx context.Context, clock Clock, d time.Duration, conn *acpclient.Conn) error {
	done := make(chan struct{})
	t := clock.AfterFunc(d, func() { close(done) })
	defer t.Stop()
	select {
	case <-done:
		return nil
	case <-conn.Done():
		return conn.Err()
	case <-ctx.Done():
		return ctx.Err()
	}
}
