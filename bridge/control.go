package bridge

import (
	"context"
	"errors"

	"github.com/acphost/acphost/acpclient"
)

// SetAgentMode switches the agent's own session mode (one of
// SessionReady.AgentModes); refused while a turn runs. It is unrelated to
// the host's policy Mode (SetPolicy).
func (s *Session) SetAgentMode(ctx context.Context, modeID string) error {
	_, err := withIdle(s, ctx, func(conn *acpclient.Conn) (struct{}, error) {
		if err := conn.SetMode(ctx, &acpclient.SetModeRequest{SessionID: s.id, ModeID: modeID}); err != nil {
			return struct{}{}, err
		}
		s.setAgentMode(modeID)
		return struct{}{}, nil
	})
	return err
}

// AgentMode returns the agent's current session mode: the last one it
// reported (on open or in an agent_mode event) or SetAgentMode chose; ""
// when the agent has no modes.
func (s *Session) AgentMode() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.agentMode
}

func (s *Session) setAgentMode(modeID string) {
	s.mu.Lock()
	s.agentMode = modeID
	s.mu.Unlock()
}

// SetConfigOption sets a session config option and returns the complete new
// list (also reported as a config event); refused while a turn runs.
func (s *Session) SetConfigOption(ctx context.Context, req acpclient.SetConfigOptionRequest) ([]acpclient.ConfigOption, error) {
	return withIdle(s, ctx, func(conn *acpclient.Conn) ([]acpclient.ConfigOption, error) {
		req.SessionID = s.id
		resp, err := conn.SetConfigOption(ctx, &req)
		if err != nil {
			return nil, err
		}
		s.rememberOptions(resp.ConfigOptions)
		s.emit(Event{Kind: KindConfig, ConfigOptions: resp.ConfigOptions})
		return resp.ConfigOptions, nil
	})
}

// SetModel selects a model (a model config option when offered, else the
// legacy method); refused while a turn runs.
func (s *Session) SetModel(ctx context.Context, model string) error {
	_, err := withIdle(s, ctx, func(conn *acpclient.Conn) (struct{}, error) {
		s.mu.Lock()
		ready := &SessionReady{ConfigOptions: s.configOptions, Models: s.models}
		s.mu.Unlock()
		opts, err := s.setModel(ctx, conn, model, ready)
		if err == nil {
			s.rebaseWindow(model)
			s.cfg.Model = model
			if opts != nil {
				s.rememberOptions(opts)
				s.emit(Event{Kind: KindConfig, ConfigOptions: opts})
			}
			s.save()
		}
		return struct{}{}, err
	})
	return err
}

// ConfigOptions returns the session's config options as last reported.
func (s *Session) ConfigOptions() []acpclient.ConfigOption {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.configOptions
}

// Models returns the legacy model list the agent reported, or nil.
func (s *Session) Models() *acpclient.ModelState {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.models
}

func (s *Session) rememberOptions(opts []acpclient.ConfigOption) {
	s.mu.Lock()
	s.configOptions = opts
	s.mu.Unlock()
}

// withIdle runs f with the session's connection while no turn runs.
func withIdle[T any](s *Session, ctx context.Context, f func(*acpclient.Conn) (T, error)) (T, error) {
	var zero T
	if !s.turnMu.TryLock() {
		return zero, ErrBusy
	}
	defer s.turnMu.Unlock()
	conn, err := s.reattach(ctx)
	if err != nil {
		return zero, err
	}
	return f(conn)
}

// setModel selects a model: through a model config option when the agent
// offers one, else the legacy session/set_model.
func (s *Session) setModel(ctx context.Context, conn *acpclient.Conn, model string, ready *SessionReady) ([]acpclient.ConfigOption, error) {
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
