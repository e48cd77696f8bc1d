package bridge

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/acphost/acphost/acpclient"
)

// ErrUnknownEffort is returned for a reasoning effort level the agent does
// not offer; the error lists the levels it does.
var ErrUnknownEffort = errors.New("unknown reasoning effort level")

// SetEffort changes the reasoning effort of the open session, live: through
// the agent's thought_level config option when it has one (level must be
// one of its values), else the provider's vendor way (Provider.SetEffort:
// a vendor method or command). An agent with neither
// fails with an error wrapping acpclient.ErrUnsupported; a level the agent
// does not offer fails with ErrUnknownEffort before anything is sent. The
// effort is kept for reattaching and in the store. Through a config option
// it may be called during a turn, as the protocol allows; the vendor way,
// which the protocol does not cover, fails with ErrTurnRunning then.
// Control calls run one at a time.
func (s *Session) SetEffort(ctx context.Context, level string) error {
	_, err := withControl(s, ctx, func(conn *acpclient.Conn) (struct{}, error) {
		if thoughtLevelOption(s.ConfigOptions()) == nil && s.b.provider.SetEffort != nil && s.Busy() {
			return struct{}{}, fmt.Errorf("bridge %s: setting effort %q: %w", s.b.cfg.ID, level, ErrTurnRunning)
		}
		opts, err := s.ctl.setEffort(ctx, conn, level, s.ConfigOptions())
		if err != nil {
			return struct{}{}, fmt.Errorf("bridge %s: setting effort %q: %w", s.b.cfg.ID, level, err)
		}
		if opts != nil {
			s.auth.configSet(opts)
		}
		s.mu.Lock()
		s.cfg.Effort = level
		s.mu.Unlock()
		s.rec.save()
		return struct{}{}, nil
	})
	return err
}

// setEffort selects a reasoning effort through a thought_level option, else
// the provider's vendor method. It returns the new config options when the
// agent sent them.
func (c *sessionControl) setEffort(ctx context.Context, conn *acpclient.Conn, level string, opts []acpclient.ConfigOption) ([]acpclient.ConfigOption, error) {
	s := c.s
	if o := thoughtLevelOption(opts); o != nil {
		if err := checkLevel(o, level); err != nil {
			return nil, err
		}
		resp, err := conn.SetConfigOption(ctx, &acpclient.SetConfigOptionRequest{SessionID: s.id, ConfigID: o.ID, Value: level})
		if err != nil {
			return nil, err
		}
		return resp.ConfigOptions, nil
	}
	if s.b.provider.SetEffort != nil {
		return nil, s.b.provider.SetEffort(ctx, conn, s.id, level)
	}
	return nil, fmt.Errorf("the agent offers no reasoning effort setting: %w", acpclient.ErrUnsupported)
}

// thoughtLevelOption returns the agent's reasoning level selector, if any.
func thoughtLevelOption(opts []acpclient.ConfigOption) *acpclient.ConfigOption {
	for i := range opts {
		if opts[i].Category == thoughtLevelCategory && opts[i].Type == acpclient.ConfigSelect {
			return &opts[i]
		}
	}
	return nil
}

// checkLevel refuses a level that is not one of the option's values.
func checkLevel(o *acpclient.ConfigOption, level string) error {
	var valid []string
	for _, v := range o.Values() {
		if v.Value == level {
			return nil
		}
		valid = append(valid, v.Value)
	}
	return UnknownEffortError(level, valid)
}

// UnknownEffortError returns the error for a level that is not one of
// valid, the levels the agent offers: it wraps ErrUnknownEffort and lists
// them. Provider.SetEffort hooks return it for levels their agent lacks.
func UnknownEffortError(level string, valid []string) error {
	if len(valid) == 0 {
		return fmt.Errorf("%w %q: the agent offers no levels", ErrUnknownEffort, level)
	}
	return fmt.Errorf("%w %q: the levels are %s", ErrUnknownEffort, level, strings.Join(valid, ", "))
}
