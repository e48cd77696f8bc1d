package bridge

import (
	"fmt"
	"slices"

	"github.com/acphost/acphost/acpclient"
)

// This file judges a session's authority from its mode table, its policy
// and what the agent reported, and plans the moves that make an agent
// ask again. It does no I/O: the session (authority_enforce.go) sends the
// moves and reports the state.

// modeClass is what a mode table says of one mode or option value.
type modeClass int

const (
	classNone    modeClass = iota // not reported, and the table has no say
	classAsking                   // asks before every action
	classPlan                     // plans only
	classSafe                     // another mode that asks
	classAuto                     // acts without asking
	classUnknown                  // the table does not list it
)

// unsafe reports whether the class may act without the host's answer.
func (c modeClass) unsafe() bool { return c == classAuto || c == classUnknown }

// classifyMode says what t knows of the agent mode id. An agent that
// reports no mode is unknown to a table that lists modes.
func (t *ModeTable) classifyMode(id string) modeClass {
	switch {
	case id == "" && t.Asking == "" && t.Plan == "" && len(t.Safe) == 0 && len(t.Auto) == 0:
		return classNone
	case id == "":
		return classUnknown
	case slices.Contains(t.Auto, id):
		return classAuto // first: a table that lists a mode twice fails closed
	case id == t.Asking:
		return classAsking
	case id == t.Plan:
		return classPlan
	case slices.Contains(t.Safe, id):
		return classSafe
	}
	return classUnknown
}

// optionValue is a config option's current value as a rule names it:
// "true" or "false" for a boolean, the value id for a select.
func optionValue(o acpclient.ConfigOption) (string, bool) {
	switch o.Type {
	case acpclient.ConfigBoolean:
		return fmt.Sprint(o.BoolValue), true
	case acpclient.ConfigSelect:
		return o.Value, true
	}
	return "", false
}

// asking is the value of the rule that asks: its Asking, or "false" for a
// boolean option whose false value asks.
func (r OptionRule) asking(typ string) string {
	if r.Asking == "" && typ == acpclient.ConfigBoolean {
		return "false"
	}
	return r.Asking
}

// classify says what r knows of a value of an option of type typ.
func (r OptionRule) classify(typ, value string) modeClass {
	switch {
	case slices.Contains(r.Auto, value):
		return classAuto
	case value != "" && value == r.asking(typ):
		return classAsking
	case value != "" && value == r.Plan:
		return classPlan
	case slices.Contains(r.Safe, value):
		return classSafe
	}
	return classUnknown
}

// authorityInput is everything a session's authority depends on.
type authorityInput struct {
	table   *ModeTable
	policy  Policy
	mode    string           // the agent's current mode
	modes   []acpclient.Mode // the modes it offers (nil: not known)
	options []acpclient.ConfigOption
	flag    string // the launch's escalating flag
	// consented: the app consented to an agent that acts unasked
	// (Session.GrantAutonomy, or a flag from its vendor options).
	consented bool
	learnErr  error // why the agent's own configuration could not be read
}

// hostFull reports whether the policy lets the agent act unasked: ModeFull
// without the read-only tool policy.
func (p Policy) hostFull() bool { return !p.ReadOnly && ParseMode(string(p.Mode)) == ModeFull }

// building reports whether the policy is ModeBuild without the read-only
// tool policy: the app answers, and may consent to an agent acting unasked.
func (p Policy) building() bool { return !p.ReadOnly && ParseMode(string(p.Mode)) == ModeBuild }

// finding is one thing that decides the state.
type finding struct {
	class         modeClass
	option, value string // for an option; empty for the mode
}

// findings lists the mode's and each ruled option's class.
func (in authorityInput) findings() []finding {
	out := []finding{{class: in.table.classifyMode(in.mode)}}
	for _, r := range in.table.Options {
		for _, o := range in.options {
			if o.ID != r.ID {
				continue
			}
			v, ok := optionValue(o)
			c := classUnknown
			if ok {
				c = r.classify(o.Type, v)
			}
			out = append(out, finding{class: c, option: o.ID, value: v})
		}
	}
	return out
}

// judge returns the session's authority state. Outside ModeFull an
// agent-autonomous state is Blocked unless the app consented in Build,
// and an unknown one only under a Strict policy; an agent without a table
// is only reported unknown.
func (in authorityInput) judge() AuthorityState {
	st := AuthorityState{HostMode: ParseMode(string(in.policy.Mode)), ReadOnly: in.policy.ReadOnly, AgentMode: in.mode, Flag: in.flag}
	if in.table == nil {
		st.State, st.Reason = AuthorityUnknown, "no mode table for this agent"
		return st
	}
	st.State, st.Reason = AuthorityProtected, askingReason(in.mode)
	if in.flag != "" {
		st.State, st.Reason = AuthorityAgentAutonomous, fmt.Sprintf("launch flag %q acts without asking", in.flag)
	}
	for _, f := range in.findings() {
		switch {
		case f.class == classAuto && st.State != AuthorityAgentAutonomous:
			st.State, st.Reason = AuthorityAgentAutonomous, subjectLabel(in.mode, f.option, f.value, "")+" acts without asking"
			st.Option, st.Value = f.option, f.value
		case f.class == classUnknown && st.State == AuthorityProtected:
			st.State, st.Reason = AuthorityUnknown, subjectLabel(in.mode, f.option, f.value, "")+" is not in the agent's mode table"
			st.Option, st.Value = f.option, f.value
		}
	}
	if in.learnErr != nil {
		st.Reason += "; its own configuration could not be read: " + in.learnErr.Error()
	}
	st.Blocked, st.ConsentNeeded = in.blocked(st.State)
	if st.State == AuthorityAgentAutonomous && in.consented && !in.policy.hostFull() && !st.Blocked {
		st.Reason += "; the app consented"
	}
	return st
}

// blocked says whether the policy refuses prompts in state, and whether
// only the app's consent is missing.
func (in authorityInput) blocked(state Authority) (blocked, consent bool) {
	p := in.policy
	switch {
	case state == AuthorityProtected || p.hostFull():
		return false, false
	case state == AuthorityUnknown:
		return p.Strict, false
	case !p.building():
		return true, false
	}
	return !in.consented, !in.consented
}

func askingReason(mode string) string {
	if mode == "" {
		return "the agent asks before acting"
	}
	return fmt.Sprintf("agent mode %q asks before acting", mode)
}

// refusal is the error a Blocked state makes prompts fail with; cause is
// why the agent could not be moved, if that was tried.
func (st AuthorityState) refusal(cause error) *AuthorityError {
	e := &AuthorityError{HostMode: st.HostMode, ReadOnly: st.ReadOnly, AgentMode: st.AgentMode,
		Option: st.Option, Value: st.Value, Flag: st.Flag, Err: ErrAgentAutonomous, Cause: cause, consent: st.ConsentNeeded}
	if st.State == AuthorityUnknown {
		e.Err = ErrAgentModeUnknown
	}
	return e
}

// authorityMove is one change that makes the agent ask: a session mode, or
// a config option's value.
type authorityMove struct {
	mode     string
	option   *acpclient.SetConfigOptionRequest
	required bool // the session stays blocked unless it succeeds
}

// plan returns the moves that make the agent ask under the policy, and
// why an unsafe mode or value cannot be moved. ModeFull moves nothing.
// preferPlan also moves an agent that asks into its plan mode in host
// Plan (at open and when the host mode changes; otherwise the app's own
// choice of an asking mode stands).
func (in authorityInput) plan(preferPlan bool) (moves []authorityMove, stuck []error) {
	if in.table == nil || in.policy.hostFull() {
		return nil, nil
	}
	planning := !in.policy.ReadOnly && ParseMode(string(in.policy.Mode)) == ModePlan
	readOnly := planning || in.policy.ReadOnly || ParseMode(string(in.policy.Mode)) == ModeAsk
	if in.flag != "" {
		stuck = append(stuck, fmt.Errorf("launch flag %q is fixed for the process: relaunch without it or use host mode full", in.flag))
	}
	if m, err := in.modeMove(readOnly, planning && preferPlan); err != nil {
		stuck = append(stuck, err)
	} else if m != nil {
		moves = append(moves, *m)
	}
	for _, r := range in.table.Options {
		for _, o := range in.options {
			if o.ID != r.ID {
				continue
			}
			if m, err := in.optionMove(r, o, readOnly, planning && preferPlan); err != nil {
				stuck = append(stuck, err)
			} else if m != nil {
				moves = append(moves, *m)
			}
		}
	}
	return moves, stuck
}

// modeMove is the session mode to move to, if any.
func (in authorityInput) modeMove(readOnly, toPlan bool) (*authorityMove, error) {
	t := in.table
	class := t.classifyMode(in.mode)
	if !class.unsafe() {
		if toPlan && t.Plan != "" && in.mode != t.Plan && in.offers(t.Plan) {
			return &authorityMove{mode: t.Plan}, nil
		}
		return nil, nil
	}
	wanted := []string{t.Asking}
	if readOnly {
		wanted = []string{t.Plan, t.Asking}
	}
	for _, id := range wanted {
		if id != "" && id != in.mode && in.offers(id) {
			return &authorityMove{mode: id, required: true}, nil
		}
	}
	return nil, fmt.Errorf("the agent offers no mode that asks (its table names %q)", t.Asking)
}

// offers reports whether the agent lists mode id; an agent that lists no
// modes is asked anyway, and may refuse.
func (in authorityInput) offers(id string) bool {
	if len(in.modes) == 0 {
		return true
	}
	return slices.ContainsFunc(in.modes, func(m acpclient.Mode) bool { return m.ID == id })
}

// optionMove is the value to set option o to, if any.
func (in authorityInput) optionMove(r OptionRule, o acpclient.ConfigOption, readOnly, toPlan bool) (*authorityMove, error) {
	v, ok := optionValue(o)
	class := classUnknown
	if ok {
		class = r.classify(o.Type, v)
	}
	if !class.unsafe() {
		if toPlan && r.Plan != "" && v != r.Plan && offersValue(o, r.Plan) {
			return &authorityMove{option: setOption(o, r.Plan)}, nil
		}
		return nil, nil
	}
	wanted := []string{r.asking(o.Type)}
	if readOnly {
		wanted = []string{r.Plan, r.asking(o.Type)}
	}
	for _, w := range wanted {
		if ok && w != "" && offersValue(o, w) {
			return &authorityMove{option: setOption(o, w), required: true}, nil
		}
	}
	return nil, fmt.Errorf("config option %q offers no value that asks", o.ID)
}

// offersValue reports whether a select option lists value (a boolean takes
// "true" and "false").
func offersValue(o acpclient.ConfigOption, value string) bool {
	if o.Type == acpclient.ConfigBoolean {
		return value == "true" || value == "false"
	}
	values := o.Values()
	return len(values) == 0 || slices.ContainsFunc(values, func(s acpclient.SelectOption) bool { return s.Value == value })
}

// setOption is the request that sets o to value.
func setOption(o acpclient.ConfigOption, value string) *acpclient.SetConfigOptionRequest {
	req := &acpclient.SetConfigOptionRequest{ConfigID: o.ID}
	if o.Type == acpclient.ConfigBoolean {
		b := value == "true"
		req.Bool = &b
	} else {
		req.Value = value
	}
	return req
}
