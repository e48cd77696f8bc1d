package bridge

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/acphost/acphost/acpclient"
)

// ErrInactive is the error of a turn the watchdog cancelled.
var ErrInactive = errors.New("bridge: agent inactive")

// Prompt runs one turn with the given content and returns its stop reason.
// Events stream to the host meanwhile: turn_start, the agent's output, and
// turn_end last. Cancelling ctx cancels the turn (session/cancel, pending
// permission requests answered "cancelled") and Prompt returns once the agent
// has ended it. If the agent process has died, Prompt starts a new one and
// resumes this session first. A second Prompt while one runs fails with
// ErrBusy: turns never overlap.
func (s *Session) Prompt(ctx context.Context, content ...acpclient.ContentBlock) (string, error) {
	if !s.turnMu.TryLock() {
		return "", ErrBusy
	}
	defer s.turnMu.Unlock()
	s.mu.Lock()
	unusable := s.unusable
	s.mu.Unlock()
	if unusable != nil {
		return "", unusable
	}
	conn, err := s.reattach(ctx)
	if err != nil {
		return "", err
	}

	s.turns++
	s.curTurn.Store(s.turns)
	defer s.curTurn.Store(0)
	s.emit(Event{Kind: KindTurnStart, Text: promptText(content)})
	if s.b.provider.OnTurnStart != nil {
		s.emitAll(s.b.provider.OnTurnStart(s.id))
	}
	turn := &turnState{conn: conn}
	turn.watchdog = startWatchdog(s.b.clock, s.b.cfg.InactivityTimeout, func() { s.expire(turn) })
	s.mu.Lock()
	s.turn = turn
	s.mu.Unlock()

	settled := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			s.cancelTurn(turn)
		case <-settled:
		}
	}()
	// The turn's own context is never cancelled: cancellation goes through
	// cancelTurn, and the turn ends only when the agent answers (or dies).
	// The answer is handled in stream order (finishTurn via PromptThen), so
	// turn_end follows every update sent before it and precedes late ones.
	// A failure the bridge can repair (sign-in, a transient backend error)
	// is held back instead of ending the turn, repaired, and the prompt
	// sent again (see recoverTurn).
	for {
		answered := make(chan struct{})
		_, err = conn.PromptThen(context.WithoutCancel(ctx), &acpclient.PromptRequest{SessionID: s.id, Prompt: content},
			func(resp *acpclient.PromptResponse, err error) {
				defer close(answered)
				if err == nil || !s.holdForRetry(turn, err) {
					s.finishTurn(turn, resp, err)
				}
			})
		if _, agentAnswered := errors.AsType[*acpclient.CallError](err); agentAnswered {
			// An error answer returns before its in-order hook has run.
			select {
			case <-answered:
			case <-conn.Done():
			}
		}
		held := s.takeHeld(turn)
		if held == nil {
			break
		}
		if conn, content, err = s.recoverTurn(ctx, turn, held, content); err != nil {
			break
		}
	}
	close(settled)
	s.finishTurn(turn, nil, err) // no answer came: the agent died or the send failed
	return turn.stopReason, turn.err
}

// finishTurn ends a turn once: it stops the watchdog, settles what is
// pending and reports the outcome (usage, error, turn_end).
func (s *Session) finishTurn(turn *turnState, resp *acpclient.PromptResponse, err error) {
	turn.finish.Do(func() {
		turn.watchdog.stop()
		s.mu.Lock()
		s.turn = nil
		s.turnsEnded++
		timedOut, cancelled := turn.timedOut, turn.cancelled
		s.mu.Unlock()
		s.cancelPending(errTurnEnded)
		if timedOut {
			err = fmt.Errorf("%w for %v: turn cancelled", ErrInactive, s.b.cfg.InactivityTimeout)
		}
		if err != nil {
			err = s.promptError(err)
			turn.err = err
			s.emit(Event{Kind: KindError, Err: err})
			s.endOpenTools()
			s.emit(Event{Kind: KindTurnEnd, StopReason: acpclient.StopCancelled, Err: err})
			return
		}
		if resp.StopReason == acpclient.StopCancelled || cancelled {
			s.endOpenTools()
		}
		if resp.Usage != nil || s.b.provider.UsageFromMeta != nil {
			s.reportTurnUsage(resp)
		}
		turn.stopReason = resp.StopReason
		s.emit(Event{Kind: KindTurnEnd, StopReason: resp.StopReason})
	})
}

// reattach returns a live connection for the session, restarting the agent
// and resuming the session natively after a crash.
func (s *Session) reattach(ctx context.Context) (*acpclient.Conn, error) {
	if err := s.closedErr(); err != nil {
		return nil, err
	}
	if conn := s.b.liveConn(); conn != nil && conn == s.conn {
		return conn, nil
	}
	conn, err := s.b.ensure(ctx)
	if err != nil {
		return nil, err
	}
	old := s.id
	s.b.unregisterSession(old)
	ready, err := s.attach(ctx, conn, old)
	if err != nil {
		return nil, err
	}
	s.emitReady(ready)
	s.save()
	s.mu.Lock()
	unusable := s.unusable
	s.mu.Unlock()
	return s.conn, unusable
}

// promptError explains a failed turn: the agent's detailed message when it
// sent one, the process's death with its stderr when it died.
func (s *Session) promptError(err error) error {
	var ce *acpclient.CallError
	if errors.As(err, &ce) {
		if detail := ce.Err.DataMessage(); detail != "" && detail != ce.Err.Message {
			return fmt.Errorf("%s: %w", detail, err)
		}
	}
	return err
}

func (s *Session) reportTurnUsage(resp *acpclient.PromptResponse) {
	if s.b.provider.UsageFromMeta != nil {
		if used, size, ok := s.b.provider.UsageFromMeta(resp.Meta); ok {
			u := s.measure(used, size, nil)
			u.Turn = resp.Usage
			s.emit(Event{Kind: KindUsage, Usage: u})
			return
		}
	}
	if resp.Usage != nil {
		u := s.Usage()
		u.Turn = resp.Usage
		s.emit(Event{Kind: KindUsage, Usage: &u})
	}
}

// endOpenTools reports the turn's unfinished tool calls as cancelled.
func (s *Session) endOpenTools() {
	s.mu.Lock()
	open := s.tools.cancelAll()
	s.mu.Unlock()
	for _, t := range open {
		s.emit(Event{Kind: KindToolEnd, Tool: t})
	}
}

// Cancel cancels the running turn, if any: it sends session/cancel and
// answers the session's pending permission requests "cancelled". The turn
// ends when the agent answers the prompt.
func (s *Session) Cancel() {
	s.mu.Lock()
	turn := s.turn
	s.mu.Unlock()
	if turn != nil {
		s.cancelTurn(turn)
	}
}

func (s *Session) cancelTurn(turn *turnState) {
	s.mu.Lock()
	turn.cancelled = true
	conn := turn.conn
	s.mu.Unlock()
	s.cancelPending(context.Canceled)
	if err := conn.Cancel(context.Background(), s.id); err != nil {
		s.b.logger.Debug("bridge: session/cancel failed", "err", err)
	}
}

// expire runs when the watchdog fires: cancel, give the agent CancelGrace
// to settle, then kill the process so a replacement starts cleanly.
func (s *Session) expire(turn *turnState) {
	s.mu.Lock()
	if s.turn != turn {
		s.mu.Unlock()
		return
	}
	turn.timedOut = true
	s.mu.Unlock()
	s.cancelTurn(turn)
	s.b.clock.AfterFunc(s.b.cfg.CancelGrace, func() {
		s.mu.Lock()
		stillRunning := s.turn == turn
		s.mu.Unlock()
		if stillRunning {
			s.b.kill(turn.conn)
		}
	})
}

// FollowUp sends more instructions into the running turn, for agents whose
// provider supports it.
func (s *Session) FollowUp(ctx context.Context, text string) error {
	s.mu.Lock()
	turn := s.turn
	s.mu.Unlock()
	if turn == nil {
		return errors.New("bridge: no turn is running to follow up")
	}
	if s.b.provider.FollowUp == nil {
		return fmt.Errorf("bridge: follow-up: %w", acpclient.ErrUnsupported)
	}
	return s.b.provider.FollowUp(ctx, turn.conn, s.id, text)
}

// Compact compacts the session's context with the agent's native method and
// reports it as a compaction event with the summary. It is refused while a
// turn runs.
func (s *Session) Compact(ctx context.Context) (string, error) {
	if s.b.provider.Compact == nil {
		return "", fmt.Errorf("bridge: compact: %w", acpclient.ErrUnsupported)
	}
	return withIdle(s, ctx, func(conn *acpclient.Conn) (string, error) {
		if avail := s.b.provider.CompactAvailable; avail != nil && !avail(conn.Agent()) {
			return "", fmt.Errorf("bridge %s: compact: the agent does not advertise native compaction: %w", s.b.cfg.ID, acpclient.ErrUnsupported)
		}
		if s.b.provider.ReportsCompaction {
			return s.b.provider.Compact(ctx, conn, s.id)
		}
		s.emit(Event{Kind: KindCompaction, Compaction: &Compaction{Status: CompactionStarted}})
		summary, err := s.b.provider.Compact(ctx, conn, s.id)
		if err != nil {
			s.emit(Event{Kind: KindCompaction, Compaction: &Compaction{Status: CompactionFailed, Message: err.Error()}})
			return "", err
		}
		s.emitCompaction(Event{}, &Compaction{Status: CompactionCompleted, Summary: summary})
		return summary, nil
	})
}

// promptText is the text of a prompt, for the turn_start event.
func promptText(content []acpclient.ContentBlock) string {
	var parts []string
	for _, b := range content {
		if b.Type == acpclient.ContentText {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}
