package bridge

import (
	"context"
	"fmt"
	"slices"

	"github.com/acphost/acphost/acpclient"
)

// A resumed session is the one the user left: OpenSession sets it back to
// the model and effort (as SessionConfig.Model and Effort, when the app
// gives none), the agent mode and the config option values its record
// holds. The agent mode and options go through SetAgentMode and
// SetConfigOption, as an app's own calls would, so the authority rules
// apply to them: a value they refuse is reported as an error event, and
// the session stays open, usable, in the mode the agent opened it in.

// restoreRecorded sets the session back to rec's agent mode and config
// option values, where the agent offers them and they differ.
func (c *sessionControl) restoreRecorded(ctx context.Context, rec *Record) {
	s := c.s
	if rec == nil {
		return
	}
	ready := s.Ready()
	modes := ready.AgentModes
	if m := rec.SessionMode; m != "" && m != s.AgentMode() && modes != nil &&
		slices.ContainsFunc(modes.AvailableModes, func(x acpclient.Mode) bool { return x.ID == m }) {
		if err := s.SetAgentMode(ctx, m); err != nil {
			s.emit(Event{Kind: KindError, Err: fmt.Errorf("restoring the recorded agent mode %q: %w", m, err)})
		}
	}
	for _, o := range s.ConfigOptions() {
		switch {
		case o.Category == "model" || o.Category == "thought_level":
			continue // restored as the session's Model and Effort
		case o.Category == "mode" && modes != nil:
			continue // restored as the agent mode
		}
		want, ok := rec.ConfigValues[o.ID]
		if !ok {
			continue
		}
		req := acpclient.SetConfigOptionRequest{ConfigID: o.ID}
		switch o.Type {
		case acpclient.ConfigBoolean:
			b := want == "true"
			if b == o.BoolValue {
				continue
			}
			req.Bool = &b
		case acpclient.ConfigSelect:
			if want == o.Value || !slices.ContainsFunc(o.Values(), func(v acpclient.SelectOption) bool { return v.Value == want }) {
				continue
			}
			req.Value = want
		default:
			continue
		}
		if _, err := s.SetConfigOption(ctx, req); err != nil {
			s.emit(Event{Kind: KindError, Err: fmt.Errorf("restoring the recorded value %q of config option %q: %w", want, o.ID, err)})
		}
	}
}
