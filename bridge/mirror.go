package bridge

import (
	"slices"

	"github.com/acphost/acphost/acpclient"
)

// A value the session keeps in two views changes in both at once when a
// call changes one of them, and each view that changed is reported as its
// event, so an app reading either accessor or following either event sees
// the same: the agent mode (AgentMode, agent_mode) and the "mode" config
// option; the legacy model list (Models, model) and the "model" option; the
// model and effort kept for reattaching and the "model" and "thought_level"
// options. What the agent reports itself is its own word and is not
// mirrored: it sends what changed.

// Config option categories that mirror another view of the session.
const (
	modeCategory  = "mode"
	modelCategory = "model"
)

// configSet records the config options a call's answer carried, reports
// them as a config event, and brings the views that mirror an option the
// call changed in line with it.
func (a *sessionAuthority) configSet(opts []acpclient.ConfigOption) {
	s := a.s
	s.mu.Lock()
	old := s.configOptions
	s.configOptions = opts
	var modeEv, modelEv *Event
	kept := false
	if v, ok := changedValue(old, opts, modeCategory); ok && v != s.agentMode && a.offersModeLocked(v) {
		s.agentMode = v
		modeEv = &Event{Kind: KindAgentMode, AgentMode: v}
	}
	model, modelChanged := changedValue(old, opts, modelCategory)
	if modelChanged {
		if s.models != nil && s.models.CurrentModelID != model {
			next := *s.models
			next.CurrentModelID = model
			s.models = &next
			cp := next
			modelEv = &Event{Kind: KindModel, Models: &cp}
		}
		modelChanged = s.cfg.Model != model
		if modelChanged {
			s.cfg.Model, kept = model, true
		}
	}
	if v, ok := changedValue(old, opts, thoughtLevelCategory); ok && s.cfg.Effort != v {
		s.cfg.Effort, kept = v, true
	}
	s.mu.Unlock()
	s.emit(Event{Kind: KindConfig, ConfigOptions: opts})
	if modeEv != nil {
		s.emit(*modeEv)
	}
	if modelEv != nil {
		s.emit(*modelEv)
	}
	if modelChanged {
		s.rebaseWindow(model)
	}
	if kept {
		s.rec.save()
	}
}

// mirrorAgentMode sets the "mode" config option to the agent mode a call
// has just set, when the option offers it, and reports the new list.
func (a *sessionAuthority) mirrorAgentMode() {
	s := a.s
	s.mu.Lock()
	opts, changed := withSelectValue(s.configOptions, modeCategory, s.agentMode)
	if changed {
		s.configOptions = opts
	}
	s.mu.Unlock()
	if changed {
		s.emit(Event{Kind: KindConfig, ConfigOptions: opts})
	}
}

// offersModeLocked reports whether mode is one of the agent's session
// modes. Called with mu held.
func (a *sessionAuthority) offersModeLocked(mode string) bool {
	s := a.s
	if s.ready == nil || s.ready.AgentModes == nil {
		return false // an agent without session modes has no AgentMode to mirror
	}
	return slices.ContainsFunc(s.ready.AgentModes.AvailableModes, func(m acpclient.Mode) bool { return m.ID == mode })
}

// selectValue returns the current value of the first select option of
// category in opts.
func selectValue(opts []acpclient.ConfigOption, category string) (string, bool) {
	for _, o := range opts {
		if o.Category == category && o.Type == acpclient.ConfigSelect {
			return o.Value, true
		}
	}
	return "", false
}

// changedValue returns the value of category's select option in next when
// it differs from the one in prev.
func changedValue(prev, next []acpclient.ConfigOption, category string) (string, bool) {
	v, ok := selectValue(next, category)
	pv, pok := selectValue(prev, category)
	if !ok || !pok || v == "" || pv == v {
		return "", false // not offered before: nothing a call changed
	}
	return v, true
}

// withSelectValue returns opts with the first select option of category
// set to value, a copy (lists are shared with events already out), and
// whether anything changed: not when value is already current or is not
// one the option offers.
func withSelectValue(opts []acpclient.ConfigOption, category, value string) ([]acpclient.ConfigOption, bool) {
	for i, o := range opts {
		if o.Category != category || o.Type != acpclient.ConfigSelect {
			continue
		}
		if o.Value == value || value == "" ||
			!slices.ContainsFunc(o.Values(), func(v acpclient.SelectOption) bool { return v.Value == value }) {
			return opts, false
		}
		next := slices.Clone(opts)
		next[i].Value = value
		return next, true
	}
	return opts, false
}

// readyModeSet mirrors an agent mode set while attaching (ready is not
// out yet) into ready's "mode" option.
func readyModeSet(ready *SessionReady) {
	if ready.AgentModes != nil {
		ready.ConfigOptions, _ = withSelectValue(ready.ConfigOptions, modeCategory, ready.AgentModes.CurrentModeID)
	}
}

// readyOptionsSet mirrors the options a call made while attaching changed
// (prev were ready's before it) into ready's agent mode and legacy model
// list. ready's states are shared with the agent's answer: they are
// replaced, never changed in place.
func readyOptionsSet(ready *SessionReady, prev []acpclient.ConfigOption) {
	if v, ok := changedValue(prev, ready.ConfigOptions, modeCategory); ok && ready.AgentModes != nil &&
		slices.ContainsFunc(ready.AgentModes.AvailableModes, func(m acpclient.Mode) bool { return m.ID == v }) {
		modes := *ready.AgentModes
		modes.CurrentModeID = v
		ready.AgentModes = &modes
	}
	if v, ok := changedValue(prev, ready.ConfigOptions, modelCategory); ok && ready.Models != nil {
		models := *ready.Models
		models.CurrentModelID = v
		ready.Models = &models
	}
}

// thoughtLevelCategory is ACP's config option category for the reasoning
// level selector.
const thoughtLevelCategory = "thought_level"
