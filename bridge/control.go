package bridge

import (
	"context"
	"errors"
	"fmt"

	"github.com/acphost/acphost/acpclient"
)

// ErrTurnRunning is returned by a session call the protocol does not allow
// during a turn (Compact): wait for turn_end, or cancel the turn. It is not
// ErrBusy, which only a Prompt gets.
var ErrTurnRunning = errors.New("bridge: not allowed while a turn runs")

// Busy reports whether a turn runs: a Prompt now would fail with ErrBusy.
// It turns false before the turn's turn_end event is emitted.
func (s *Session) Busy() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ctl.busy
}

// claim waits until neither a turn nor a compaction runs, failing with
// duringTurn's error if a turn runs, and then marks the session with take,
// under Session.mu.
func (s *Session) claim(ctx context.Context, duringTurn func() error, take func()) error {
	for {
		s.mu.Lock()
		if s.ctl.busy {
			s.mu.Unlock()
			return duringTurn()
		}
		wait := s.ctl.compacting
		if wait == nil {
			take()
			s.mu.Unlock()
			return nil
		}
		s.mu.Unlock()
		select {
		case <-wait:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// holdPrompts claims the session the way a compaction does, so a Prompt
// meanwhile waits for it instead of failing (busy's error if a turn runs),
// and then takes the turn lock. release gives both back, the turn lock
// first. Compact and Fork run under it.
func (c *sessionControl) holdPrompts(ctx context.Context, busy func() error) (release func(), err error) {
	s := c.s
	done := make(chan struct{})
	if err := s.claim(ctx, busy, func() { s.ctl.compacting = done }); err != nil {
		return nil, err
	}
	unclaim := func() {
		s.mu.Lock()
		s.ctl.compacting = nil
		s.mu.Unlock()
		close(done)
	}
	if err := s.turns.mu.LockCtx(ctx); err != nil {
		unclaim()
		return nil, err
	}
	return func() { s.turns.mu.Unlock(); unclaim() }, nil
}

// SetAgentMode switches the agent's own session mode (one of
// SessionReady.AgentModes), also during a turn (the protocol allows it). It
// is unrelated to the host's policy Mode (SetPolicy). On success the mode
// is recorded (AgentMode) and reported as an agent_mode event, unless the
// agent reported a mode itself meanwhile (its word stands, whichever mode
// it names): some agents confirm only in their own words (a text chunk) or
// a vendor notification.
//
// Outside host Full, a mode the agent's table lists as acting without
// asking, or does not list, is refused with an *AuthorityError before
// anything is sent (see Authority).
func (s *Session) SetAgentMode(ctx context.Context, modeID string) error {
	if err := s.auth.allowAgentMode(modeID); err != nil {
		return err
	}
	_, err := withControl(s, ctx, func(conn *acpclient.Conn) (struct{}, error) {
		before := s.auth.modeReports()
		if err := conn.SetMode(ctx, &acpclient.SetModeRequest{SessionID: s.id, ModeID: modeID}); err != nil {
			return struct{}{}, err
		}
		s.auth.noteAgentMode(before, modeID) // unless the agent's own current_mode_update said so
		s.auth.mirrorAgentMode()
		s.auth.settleAuthority(nil, false)
		s.rec.save() // a resumed session comes back in this mode
		return struct{}{}, nil
	})
	return err
}

// AgentMode returns the agent's current session mode: the last one it
// reported (on open, in an agent_mode event, in a vendor notification the
// provider maps) or SetAgentMode chose; "" when the agent has no modes.
func (s *Session) AgentMode() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.agentMode
}

func (c *sessionControl) setAgentMode(modeID string) {
	s := c.s
	s.mu.Lock()
	s.agentMode = modeID
	s.mu.Unlock()
}

// SetConfigOption sets a session config option, also during a turn, and
// returns the complete new list (also reported as a config event). Outside
// host Full, a value the agent's table lists as acting without asking, or
// does not list, is refused with an *AuthorityError before anything is
// sent.
func (s *Session) SetConfigOption(ctx context.Context, req acpclient.SetConfigOptionRequest) ([]acpclient.ConfigOption, error) {
	if err := s.auth.allowConfigOption(req); err != nil {
		return nil, err
	}
	return withControl(s, ctx, func(conn *acpclient.Conn) ([]acpclient.ConfigOption, error) {
		req.SessionID = s.id
		resp, err := conn.SetConfigOption(ctx, &req)
		if err != nil {
			return nil, err
		}
		s.auth.configSet(resp.ConfigOptions)
		s.auth.settleAuthority(nil, false)
		s.rec.save() // a resumed session comes back with these values
		return resp.ConfigOptions, nil
	})
}

// SetModel selects a model, also during a turn: through a model config
// option when offered (reported as a config event), else the legacy
// session/set_model, after which Models().CurrentModelID is the new model
// and a model event reports it.
func (s *Session) SetModel(ctx context.Context, model string) error {
	_, err := withControl(s, ctx, func(conn *acpclient.Conn) (struct{}, error) {
		s.mu.Lock()
		ready := &SessionReady{ConfigOptions: s.configOptions, Models: s.models}
		s.mu.Unlock()
		opts, err := s.ctl.setModel(ctx, conn, model, ready)
		if err != nil {
			return struct{}{}, err
		}
		s.rebaseWindow(model)
		s.mu.Lock() // the agent's goroutine reads it for the context window
		s.cfg.Model = model
		s.mu.Unlock()
		if opts != nil {
			s.auth.configSet(opts)
		} else {
			s.emit(Event{Kind: KindModel, Models: s.ctl.setCurrentModel(model)})
		}
		s.rec.save()
		return struct{}{}, nil
	})
	return err
}

// setCurrentModel records the legacy model selection and returns a copy of
// the new model state.
func (c *sessionControl) setCurrentModel(model string) *acpclient.ModelState {
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	next := acpclient.ModelState{}
	if s.models != nil {
		next = *s.models
	}
	next.CurrentModelID = model
	s.models = &next
	cp := next
	return &cp
}

// ConfigOptions returns the session's config options as last reported.
func (s *Session) ConfigOptions() []acpclient.ConfigOption {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.configOptions
}

// Models returns the legacy model list the agent reported, with the
// current model as last reported or selected, or nil.
func (s *Session) Models() *acpclient.ModelState {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.models
}

func (c *sessionControl) rememberOptions(opts []acpclient.ConfigOption) {
	s := c.s
	s.mu.Lock()
	s.configOptions = opts
	s.mu.Unlock()
}

// withControl runs a control call f with the session's connection (started
// again and resumed if the agent died), one control call at a time. It
// waits for another control call or a reattach in flight, never fails
// because of one, and runs whether or not a turn runs.
func withControl[T any](s *Session, ctx context.Context, f func(*acpclient.Conn) (T, error)) (T, error) {
	var zero T
	if err := s.ctl.sem.LockCtx(ctx); err != nil {
		return zero, err
	}
	defer s.ctl.sem.Unlock()
	conn, err := s.native.reattachLocked(ctx)
	if err != nil {
		return zero, err
	}
	return f(conn)
}

// setModel selects a model: through a model config option when the agent
// offers one, else the legacy session/set_model.
func (c *sessionControl) setModel(ctx context.Context, conn *acpclient.Conn, model string, ready *SessionReady) ([]acpclient.ConfigOption, error) {
	s := c.s
	for _, o := range ready.ConfigOptions {
		if o.Category == "model" && o.Type == acpclient.ConfigSelect {
			resp, err := conn.SetConfigOption(ctx, &acpclient.SetConfigOptionRequest{SessionID: s.id, ConfigID: o.ID, Value: model})
			if err != nil {
				return nil, err
			}
			return resp.ConfigOptions, nil
		}
	}
	if ready.Models == nil {
		return nil, errors.New("the agent offers no model selection")
	}
	return nil, conn.SetModel(ctx, &acpclient.SetModelRequest{SessionID: s.id, ModelID: model})
}

// Compact compacts the session's context with the agent's native method and
// reports it as a compaction event with the summary. It fails with
// ErrTurnRunning while a turn runs; a Prompt made while it compacts waits
// for it.
func (s *Session) Compact(ctx context.Context) (string, error) {
	if err := s.closedErr(); err != nil {
		return "", err
	}
	if s.b.provider.Compact == nil {
		return "", fmt.Errorf("bridge: compact: %w", acpclient.ErrUnsupported)
	}
	release, err := s.ctl.holdPrompts(ctx, func() error { return fmt.Errorf("bridge %s: compact: %w", s.b.cfg.ID, ErrTurnRunning) })
	if err != nil {
		return "", err
	}
	defer release()
	return withControl(s, ctx, func(conn *acpclient.Conn) (string, error) { return s.ctl.compact(ctx, conn) })
}

func (c *sessionControl) compact(ctx context.Context, conn *acpclient.Conn) (string, error) {
	s := c.s
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
}
