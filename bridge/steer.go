package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/acphost/acphost/acpclient"
)

// This file is steering: an instruction put into the turn that runs, by
// whichever way the agent offers, or by the fallback the app chose.

// ErrNoTurn is Steer's error when no turn runs and the app chose no
// fallback: send the text as a prompt instead.
var ErrNoTurn = errors.New("bridge: no turn is running")

// SteerMode says how Steer would put text into a running turn of this
// session, so a UI can label its button before the user presses it: one
// of SteerInject, SteerExtension and SteerProvider (preferred in that
// order), or "" when the agent offers no way, and Steer then applies its
// fallback. It reads the capabilities of the agent process that runs now
// (or of the profile alone, when none does).
func (s *Session) SteerMode() SteerVia {
	return steerModeOf(s.b.liveConn(), s.b.provider.SteerRequest != nil)
}

func steerModeOf(conn *acpclient.Conn, providerHook bool) SteerVia {
	if conn != nil {
		init := conn.Agent()
		if injectSteers(init.AgentCapabilities.SessionCapabilities.Inject) {
			return SteerInject
		}
		if steeringSupported(init.Meta) {
			return SteerExtension
		}
	}
	if providerHook {
		return SteerProvider
	}
	return ""
}

// injectSteers reads the draft's inject capability: an object whose
// "modes", when listed, include "steer".
func injectSteers(capability json.RawMessage) bool {
	var c *struct {
		Modes []string `json:"modes"`
	}
	if len(capability) == 0 || json.Unmarshal(capability, &c) != nil || c == nil {
		return false
	}
	return c.Modes == nil || slices.Contains(c.Modes, "steer")
}

// steeringSupported reads _meta.steering.supported of an initialize
// result.
func steeringSupported(meta json.RawMessage) bool {
	var m struct {
		Steering struct {
			Supported bool `json:"supported"`
		} `json:"steering"`
	}
	return len(meta) > 0 && json.Unmarshal(meta, &m) == nil && m.Steering.Supported
}

// Steer puts text into the running turn as a further instruction from the
// user, by the way SteerMode names, and returns how it went: that way, or
// the fallback applied. The text is reported (and journaled) as a
// user_text event marked Steer, carrying the turn it joined.
//
// When the session cannot steer, because the agent offers no way, no turn
// runs (also a turn that ended just before the agent took the text), or
// the agent failed to take it, the fallback decides: SteerQueue queues the
// text as the next prompt, SteerInterrupt cancels the running turn and
// sends it as the next, and "" fails: with ErrNoTurn when no turn runs,
// acpclient.ErrUnsupported when the agent offers no way, the agent's error
// when it failed. The text is never dropped without an error: an agent
// that fails to take it is reported (an error event) before the fallback
// applies.
func (s *Session) Steer(ctx context.Context, text string, fallback SteerVia) (SteerVia, error) {
	if err := s.closedErr(); err != nil {
		return "", err
	}
	switch fallback {
	case "", SteerQueue, SteerInterrupt:
	default:
		return "", fmt.Errorf("bridge %s: steer: %q is not a fallback (SteerQueue, SteerInterrupt or \"\")", s.b.cfg.ID, fallback)
	}
	if text == "" {
		return "", fmt.Errorf("bridge %s: steer: the text is empty", s.b.cfg.ID)
	}
	s.mu.Lock()
	turn := s.turn
	s.mu.Unlock()
	meta := promptMeta(ctx) // for the prompt a fallback queues
	if err := checkPromptMeta(meta); err != nil {
		return "", fmt.Errorf("bridge %s: session %s: steer: %w", s.b.cfg.ID, s.key, err)
	}
	if turn == nil {
		return s.turns.steerFallback(text, meta, fallback, nil, ErrNoTurn)
	}
	via := steerModeOf(turn.conn, s.b.provider.SteerRequest != nil)
	if via == "" {
		return s.turns.steerFallback(text, meta, fallback, turn, fmt.Errorf("the agent offers no way to steer a turn: %w", acpclient.ErrUnsupported))
	}
	// The agent must have the turn's prompt before the text steered into
	// it: right after turn_start it may not have been written yet.
	select {
	case <-turn.sent:
	case <-ctx.Done():
		return "", fmt.Errorf("bridge %s: session %s: steer: waiting for turn %d's prompt to be sent: %w", s.b.cfg.ID, s.key, turn.number, ctx.Err())
	}
	taken := func() { s.emit(Event{Kind: KindUserText, Text: text, Turn: turn.number, Steer: via}) }
	err := s.turns.steerNative(ctx, turn.conn, via, text, taken)
	if err == nil {
		return via, nil
	}
	if fallback != "" && !errors.Is(err, ErrNoTurn) {
		s.emit(Event{Kind: KindError, Turn: turn.number, Err: fmt.Errorf("steering turn %d (%s): %w; applying the fallback, %s", turn.number, via, err, fallback)})
	}
	return s.turns.steerFallback(text, meta, fallback, turn, err)
}

// steerNative sends text by way via and calls taken once the agent has
// taken it, in stream order (where its answer sits among the agent's
// updates).
// ErrNoTurn means the agent said its turn had ended.
func (tr *sessionTurns) steerNative(ctx context.Context, conn *acpclient.Conn, via SteerVia, text string, taken func()) error {
	s := tr.s
	blocks := []acpclient.ContentBlock{acpclient.TextBlock(text)}
	switch via {
	case SteerInject:
		params := struct {
			SessionID string                   `json:"sessionId"`
			Mode      string                   `json:"mode"`
			Content   []acpclient.ContentBlock `json:"content"`
		}{s.id, "steer", blocks}
		return conn.CallThen(ctx, "session/inject", params, nil, func(_ json.RawMessage, err error) {
			if err == nil {
				taken()
			}
		})
	case SteerExtension:
		params := map[string]any{"sessionId": s.id, "prompt": blocks,
			// The agent leaves text for a turn that has ended to us, rather
			// than starting a turn of its own that no prompt owns.
			"_meta": map[string]any{"steering": map[string]string{"idleBehavior": "promptRequired"}}}
		var raw json.RawMessage
		err := conn.CallThen(ctx, "_session/steering", params, &raw, func(result json.RawMessage, err error) {
			if err == nil && steeringOutcome(result) == nil {
				taken()
			}
		})
		if err != nil {
			return err
		}
		return steeringOutcome(raw)
	default:
		method, params, err := s.b.provider.SteerRequest(s.id, text)
		if err != nil {
			return err
		}
		return conn.CallThen(ctx, method, params, nil, func(_ json.RawMessage, err error) {
			if err == nil {
				taken()
			}
		})
	}
}

// steeringOutcome reads a _session/steering answer: nil when the text was
// injected, ErrNoTurn when the agent's turn had ended.
func steeringOutcome(raw json.RawMessage) error {
	var result struct {
		Outcome string `json:"outcome"`
		Reason  string `json:"reason"`
	}
	if err := json.Unmarshal(raw, &result); err != nil {
		return fmt.Errorf("_session/steering: reading the answer %s: %w", raw, err)
	}
	switch result.Outcome {
	case "injected":
		return nil
	case "promptRequired":
		return fmt.Errorf("the agent's turn had ended (%s): %w", result.Reason, ErrNoTurn)
	}
	return fmt.Errorf("_session/steering: the agent answered outcome %q, not \"injected\"", result.Outcome)
}

// steerFallback applies the fallback for text that could not be steered
// into turn (nil: none ran) because of why: it goes first in the queue,
// with meta as its prompt's _meta, and for SteerInterrupt the queue
// resumes and turn is cancelled.
func (tr *sessionTurns) steerFallback(text string, meta json.RawMessage, fallback SteerVia, turn *turnState, why error) (SteerVia, error) {
	s := tr.s
	if fallback == "" {
		return "", fmt.Errorf("bridge %s: session %s: steer: %w", s.b.cfg.ID, s.key, why)
	}
	p := QueuedPrompt{ID: newQueuedID(), Content: []acpclient.ContentBlock{acpclient.TextBlock(text)}, Text: text, Queued: s.b.clock.Now(), Meta: meta}
	if err := s.queue.insert(p, 0); err != nil {
		return "", fmt.Errorf("bridge %s: session %s: steer (%s fallback, since %v): %w", s.b.cfg.ID, s.key, fallback, why, err)
	}
	if fallback == SteerInterrupt {
		s.queue.resume()
		if turn != nil {
			s.turns.cancelTurn(turn) // the queue runs the text once it has ended
		}
	}
	s.queue.kick()
	return fallback, nil
}
