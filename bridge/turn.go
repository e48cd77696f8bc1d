package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/internal/wire"
)

// ErrInactive is the error of a turn the watchdog cancelled.
var ErrInactive = errors.New("bridge: agent inactive")

// ErrCancelIgnored is the error of a cancelled turn whose agent did not
// answer the prompt within Config.CancelGrace of session/cancel. The turn
// ends with stop reason "cancelled" and the agent process is killed, since
// it is no longer following the protocol; the next prompt starts a new one
// and resumes the session natively where the agent can.
var ErrCancelIgnored = errors.New("bridge: the agent did not acknowledge the cancel")

// waitEnded waits until no turn holds the session, so a turn the agent's
// exit broke has reported its end.
func (tr *sessionTurns) waitEnded() {
	tr.mu.Lock()
	tr.mu.Unlock() // an empty critical section: the wait is the point
}

// watchdog is the running turn's watchdog, or nil between turns.
func (tr *sessionTurns) watchdog() *watchdog {
	s := tr.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.turn == nil {
		return nil
	}
	return s.turn.watchdog
}

// tryHold takes the turn lock if no turn, compaction or reattach holds it;
// release gives it back.
func (tr *sessionTurns) tryHold() bool { return tr.mu.TryLock() }

// release gives back the lock tryHold took.
func (tr *sessionTurns) release() { tr.mu.Unlock() }

// Prompt runs one turn with the given content and returns its stop reason.
// Events stream to the host meanwhile: turn_start, the agent's output, and
// turn_end last, each carrying the turn's number (Event.Turn; 1 for the
// session's first prompt). Updates the agent sends after the turn's answer
// while no new turn runs are tagged Late and carry the number of the turn
// that ended. When the turn ends, every tool row still open is closed with
// status ToolUnfinished (a tool_end before turn_end).
//
// Cancelling ctx cancels the turn (see Cancel) and Prompt returns once the
// agent has ended it, or after Config.CancelGrace with ErrCancelIgnored. If
// the agent process has died, Prompt starts a new one and resumes this
// session first. A second Prompt while a turn runs fails with ErrBusy:
// turns never overlap. The session accepts the next prompt before turn_end
// is emitted, so an app may prompt again from its turn_end handler. A
// Prompt made while the session compacts waits for the compaction.
//
// The prompt's _meta (W3C trace context, say) comes from ctx: see
// WithPromptMeta.
func (s *Session) Prompt(ctx context.Context, content ...acpclient.ContentBlock) (string, error) {
	return s.prompt(ctx, content, promptMeta(ctx), nil)
}

// prompt is Prompt, sending meta as the prompt's _meta; began, when set,
// is called with the turn's number once the turn has begun (after
// turn_start), so the queue knows its prompt left it.
func (s *Session) prompt(ctx context.Context, content []acpclient.ContentBlock, meta json.RawMessage, began func(turn uint64)) (string, error) {
	if err := checkPromptMeta(meta); err != nil {
		return "", fmt.Errorf("bridge %s: session %s: %w", s.b.cfg.ID, s.key, err)
	}
	if err := s.turns.claimTurn(ctx); err != nil {
		return "", err
	}
	// Wait for the previous turn's last steps, a compaction or a relaunch.
	if err := s.turns.mu.LockCtx(ctx); err != nil {
		s.turns.releaseTurn()
		return "", err
	}
	defer s.turns.mu.Unlock()
	content = s.turns.seedContent(content) // a transcript fork's first prompt
	turn, err := s.turns.beginTurn(ctx, content, meta)
	if err != nil {
		s.turns.releaseTurn()
		return "", err
	}
	conn := turn.conn
	if began != nil {
		began(turn.number)
	}

	settled := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			s.turns.cancelTurn(turn)
		case <-settled:
		}
	}()
	// The turn's own context is never cancelled: cancellation goes through
	// cancelTurn, and the turn ends only when the agent answers (or dies,
	// or ignores the cancel past its grace).
	// The answer is handled in stream order (finishTurn via PromptThen), so
	// turn_end follows every update sent before it and precedes late ones.
	// A failure the bridge can repair (sign-in, a transient backend error)
	// is held back instead of ending the turn, repaired, and the prompt
	// sent again (see recoverTurn).
	for {
		answered := make(chan struct{})
		_, err = conn.PromptThen(wire.WithSent(context.WithoutCancel(ctx), turn.markSent), &acpclient.PromptRequest{SessionID: s.id, Prompt: content, Meta: meta},
			func(resp *acpclient.PromptResponse, err error) {
				defer close(answered)
				if err == nil || !s.turns.holdForRetry(turn, err) {
					s.turns.finishTurn(turn, resp, err)
				}
			})
		if _, agentAnswered := errors.AsType[*acpclient.CallError](err); agentAnswered {
			// An error answer returns before its in-order hook has run.
			select {
			case <-answered:
			case <-conn.Done():
			}
		}
		held := s.turns.takeHeld(turn)
		if held == nil {
			break
		}
		if conn, content, err = s.turns.recoverTurn(ctx, turn, held, content); err != nil {
			break
		}
	}
	close(settled)
	s.turns.finishTurn(turn, nil, err) // no answer came: the agent died or the send failed
	s.ckpt.endTurn(turn.number)
	return turn.stopReason, turn.err
}

// beginTurn attaches the session and starts a turn: its number, the tool
// rows of the previous turn forgotten, turn_start (with the prompt's
// meta), the watchdog.
func (tr *sessionTurns) beginTurn(ctx context.Context, content []acpclient.ContentBlock, meta json.RawMessage) (*turnState, error) {
	s := tr.s
	s.mu.Lock()
	unusable := s.unusable
	s.mu.Unlock()
	if unusable != nil {
		return nil, unusable
	}
	conn, err := s.native.reattach(ctx)
	if err != nil {
		return nil, err
	}
	if err := s.auth.authorityGate(ctx); err != nil {
		return nil, err
	}
	s.mu.Lock()
	left := s.tools.beginTurn()
	s.mu.Unlock()
	for _, t := range left { // rows opened by late updates between turns
		s.emitFromAgent(Event{Kind: KindToolEnd, Tool: t})
	}
	s.mu.Lock()
	tr.started++
	turn := &turnState{conn: conn, number: tr.started, sent: make(chan struct{})}
	s.mu.Unlock()
	s.curTurn.Store(turn.number)
	// The record counts the turn before it runs, so a host that dies in it
	// never numbers another turn the same.
	s.rec.saveProgress()
	s.ckpt.beginTurn(ctx, turn.number)
	turn.watchdog = startWatchdog(s.b.clock, s.b.cfg.InactivityTimeout, func() { tr.expire(turn) })
	// The turn runs before turn_start is out: an app that steers or
	// cancels on seeing it finds the turn (and waits, in Steer and
	// cancelTurn, for its prompt to be sent).
	s.mu.Lock()
	s.turn = turn
	s.mu.Unlock()
	s.emit(Event{Kind: KindTurnStart, Text: promptText(content), Raw: meta})
	if s.b.provider.OnTurnStart != nil {
		s.emitAll(s.b.provider.OnTurnStart(s.id))
	}
	return turn, nil
}

// finishTurn ends a turn once: it stops the watchdog and the cancel grace,
// settles what is pending, closes the open tool rows and reports the
// outcome (usage, error, turn_end). The session accepts the next prompt
// before turn_end is emitted.
func (tr *sessionTurns) finishTurn(turn *turnState, resp *acpclient.PromptResponse, err error) {
	s := tr.s
	turn.finish.Do(func() {
		turn.markSent()
		turn.watchdog.stop()
		s.mu.Lock()
		if turn.grace != nil {
			turn.grace.Stop()
		}
		s.turn = nil
		s.turnsEnded++
		s.ctl.lastTurn = turn.number
		timedOut, aborted := turn.timedOut, turn.aborted
		open := s.tools.endTurn()
		s.mu.Unlock()
		s.pending.abandonAll(errTurnEnded)
		if timedOut {
			inactive := fmt.Errorf("%w for %v: turn cancelled", ErrInactive, s.b.cfg.InactivityTimeout)
			if errors.Is(err, ErrCancelIgnored) {
				err = fmt.Errorf("%w; %w", inactive, err)
			} else {
				err = inactive
			}
		}
		end := Event{Kind: KindTurnEnd, Turn: turn.number}
		if err != nil {
			err = promptError(err)
			turn.err = err
			if aborted {
				turn.stopReason = acpclient.StopCancelled
			}
			s.emit(Event{Kind: KindError, Err: err})
			tr.closeRows(open)
			end.StopReason, end.Err = acpclient.StopCancelled, err
		} else {
			tr.closeRows(open)
			if resp.Usage != nil || s.b.provider.UsageFromMeta != nil {
				tr.reportTurnUsage(resp)
			}
			turn.stopReason = resp.StopReason
			end.StopReason = resp.StopReason
		}
		s.curTurn.Store(0)
		tr.releaseTurn()
		s.emit(end)
		s.queue.turnEnded(turn.number, end.StopReason, err)
	})
}

// promptError explains a failed turn: the agent's detailed message when it
// sent one, the process's death with its stderr when it died.
func promptError(err error) error {
	var ce *acpclient.CallError
	if errors.As(err, &ce) {
		if detail := ce.Err.DataMessage(); detail != "" && detail != ce.Err.Message {
			return fmt.Errorf("%s: %w", detail, err)
		}
	}
	return err
}

func (tr *sessionTurns) reportTurnUsage(resp *acpclient.PromptResponse) {
	s := tr.s
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

// closeRows reports the tool rows the turn's end closed (ToolUnfinished).
func (tr *sessionTurns) closeRows(rows []*ToolCall) {
	s := tr.s
	for _, t := range rows {
		s.emit(Event{Kind: KindToolEnd, Tool: t})
	}
}

// Cancel cancels the running turn, if any, in the protocol's order: it
// sends session/cancel, then answers the session's pending permission
// requests "cancelled" (and cancels its other pending requests). The turn
// ends when the agent answers the prompt; if it has not within
// Config.CancelGrace, the turn ends anyway, with stop reason "cancelled"
// and ErrCancelIgnored, and the agent process is killed. The session's
// queue is kept, and its next prompt runs once the turn has ended; to drop
// it too, call ClearQueue first.
func (s *Session) Cancel() {
	s.mu.Lock()
	turn := s.turn
	s.mu.Unlock()
	if turn != nil {
		s.turns.cancelTurn(turn)
	}
}

func (tr *sessionTurns) cancelTurn(turn *turnState) {
	s := tr.s
	s.mu.Lock()
	if s.turn != turn {
		s.mu.Unlock()
		return
	}
	turn.cancelled = true
	conn := turn.conn
	if turn.grace == nil {
		turn.grace = s.b.clock.AfterFunc(s.b.cfg.CancelGrace, func() { tr.abortTurn(turn) })
	}
	s.mu.Unlock()
	// A cancel that reached the agent before the prompt would cancel
	// nothing: the agent would run the turn through.
	<-turn.sent
	// The agent must learn of the cancel before its requests are answered,
	// or it reads "cancelled" as a refusal and carries on with the turn.
	if err := conn.Cancel(context.Background(), s.id); err != nil {
		s.b.logger.Debug("bridge: session/cancel failed", "err", err)
	}
	s.pending.abandonAll(errTurnCancelled)
}

// abortTurn ends a cancelled turn whose agent did not answer within the
// grace, then kills the process so a replacement starts cleanly.
func (tr *sessionTurns) abortTurn(turn *turnState) {
	s := tr.s
	s.mu.Lock()
	running := s.turn == turn
	turn.aborted = running
	s.mu.Unlock()
	if !running {
		return
	}
	tr.finishTurn(turn, nil, fmt.Errorf("%w within %v of session/cancel; the agent process was killed", ErrCancelIgnored, s.b.cfg.CancelGrace))
	s.b.kill(turn.conn)
}

// expire runs when the watchdog fires: cancel the turn, which then gets
// CancelGrace to settle (see cancelTurn).
func (tr *sessionTurns) expire(turn *turnState) {
	s := tr.s
	s.mu.Lock()
	if s.turn != turn {
		s.mu.Unlock()
		return
	}
	turn.timedOut = true
	s.mu.Unlock()
	tr.cancelTurn(turn)
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

// claimTurn claims the session for a turn: ErrBusy while another turn
// runs; while a compaction runs it waits for it (or ctx).
func (tr *sessionTurns) claimTurn(ctx context.Context) error {
	s := tr.s
	return s.claim(ctx, func() error { return ErrBusy }, func() { s.ctl.busy = true })
}

// releaseTurn gives the session back after a turn.
func (tr *sessionTurns) releaseTurn() {
	s := tr.s
	s.mu.Lock()
	s.ctl.busy = false
	s.mu.Unlock()
}
