package bridge

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/acphost/acphost/acpclient"
)

// This file holds the session-side machinery behind the Provider hooks that
// profiles use: provider events, the context meter's window, the policy
// lock, and the repair of failed prompts (sign-in, transient errors).

// maxAuthRounds bounds how often one call asks the user to sign in before
// it gives up (a wrong key typed twice is not a reason to loop forever).
const maxAuthRounds = 3

// emitAll queues events a provider hook derived, as agent activity.
func (s *Session) emitAll(events []Event) {
	for _, ev := range events {
		s.emitProviderEvent(ev)
	}
}

// emitProviderEvent queues an event a provider mapped from a vendor
// notification or derived from activity: compaction goes through the meter
// handling of emitCompaction, usage updates the session's meter, agent_mode
// and model events update the session's mode and model state.
func (s *Session) emitProviderEvent(ev Event) {
	switch {
	case ev.Kind == KindCompaction && ev.Compaction != nil:
		s.emitCompaction(ev, ev.Compaction)
	case ev.Kind == KindUsage && ev.Usage != nil:
		ev.Usage = s.applyUsage(ev.Usage)
		s.emitFromAgent(ev)
	case ev.Kind == KindAgentMode && ev.AgentMode != "":
		s.auth.agentReportedMode(ev.AgentMode)
		s.emitFromAgent(ev)
		s.auth.recheckAuthority(false)
	case ev.Kind == KindModel && ev.Models != nil:
		ev.Models = s.ctl.setCurrentModel(ev.Models.CurrentModelID)
		s.emitFromAgent(ev)
	default:
		s.emitFromAgent(ev)
	}
}

// applyUsage merges a provider's usage report into the meter. A report
// without a window uses the one the agent served before, else the
// provider's table; a report with only a percentage gets its tokens from
// that window.
func (s *Session) applyUsage(u *Usage) *Usage {
	s.mu.Lock()
	defer s.mu.Unlock()
	nu := *u
	if nu.Size <= 0 {
		nu.Size = s.usage.Size
	}
	if nu.Size <= 0 && s.b.provider.ContextWindow != nil {
		nu.Size = s.b.provider.ContextWindow(s.cfg.Model)
	}
	if nu.Known && nu.Used == 0 && nu.Percent > 0 && nu.Size > 0 {
		nu.Used = int64(nu.Percent * float64(nu.Size) / 100)
	}
	if nu.Known && nu.Percent == 0 && nu.Used > 0 && nu.Size > 0 {
		nu.Percent = float64(nu.Used) * 100 / float64(nu.Size)
	}
	if nu.Cost == nil {
		nu.Cost = s.usage.Cost
	}
	s.usage = nu
	out := nu
	return &out
}

// rebaseWindow moves the meter onto a new model's window from the
// provider's table (0 when the table does not know it), keeping the used
// tokens and recomputing the percentage, and reports the result.
func (s *Session) rebaseWindow(model string) {
	if s.b.provider.ContextWindow == nil {
		return
	}
	s.mu.Lock()
	s.usage.Size = s.b.provider.ContextWindow(model)
	s.usage.Percent = 0
	if s.usage.Known && s.usage.Size > 0 {
		s.usage.Percent = min(100, float64(s.usage.Used)*100/float64(s.usage.Size))
	}
	u := s.usage
	s.mu.Unlock()
	s.emit(Event{Kind: KindUsage, Usage: &u})
}

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

// errorsAsCall returns the agent's error inside err, if any.
func errorsAsCall(err error) *acpclient.Error {
	var e *acpclient.Error
	if errors.As(err, &e) {
		return e
	}
	return nil
}
