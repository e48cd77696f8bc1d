package bridge

import (
	"context"
	"fmt"
	"slices"

	"github.com/acphost/acphost/acpclient"
)

// What the authority refuses: a launch flag that acts unasked, a prompt
// while blocked, and the app's own choice of an agent mode or option
// value that would act unasked. Moving the agent is in
// authority_enforce.go.

// refuseLaunchFlag is the refusal of a session under policy p on a launch
// with an escalating flag: it is allowed with host Full, and with Build,
// where the app's consent decides whether it takes prompts.
func refuseLaunchFlag(p Policy, flag string) error {
	if flag == "" || p.hostFull() || p.building() {
		return nil
	}
	st := AuthorityState{State: AuthorityAgentAutonomous, HostMode: ParseMode(string(p.Mode)), ReadOnly: p.ReadOnly, Flag: flag}
	return st.refusal(nil)
}

// authorityGate is the check before a turn: the due moves first, then the
// refusal of a blocked session.
func (a *sessionAuthority) authorityGate(ctx context.Context) error {
	s := a.s
	if err := s.ctl.sem.LockCtx(ctx); err != nil {
		return err
	}
	s.mu.Lock()
	a.reverts = 0
	s.mu.Unlock()
	a.enforceLocked(ctx, false)
	s.ctl.sem.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	return a.refusal
}

// allowAgentMode refuses, before anything is sent, an agent mode that
// would act unasked (or that the table does not list) outside host Full.
func (a *sessionAuthority) allowAgentMode(modeID string) error {
	s := a.s
	s.mu.Lock()
	t, p := a.tableLocked(), s.policy
	s.mu.Unlock()
	if t == nil || p.hostFull() {
		return nil
	}
	return refuseClass(p, t.classifyMode(modeID), AuthorityState{AgentMode: modeID})
}

// allowConfigOption refuses, before anything is sent, a config option
// value that would let the agent act unasked outside host Full.
func (a *sessionAuthority) allowConfigOption(req acpclient.SetConfigOptionRequest) error {
	s := a.s
	s.mu.Lock()
	t, p := a.tableLocked(), s.policy
	s.mu.Unlock()
	if t == nil || p.hostFull() {
		return nil
	}
	i := slices.IndexFunc(t.Options, func(r OptionRule) bool { return r.ID == req.ConfigID })
	if i < 0 {
		return nil
	}
	typ, value := acpclient.ConfigSelect, req.Value
	if req.Bool != nil {
		typ, value = acpclient.ConfigBoolean, fmt.Sprint(*req.Bool)
	}
	return refuseClass(p, t.Options[i].classify(typ, value), AuthorityState{AgentMode: s.AgentMode(), Option: req.ConfigID, Value: value})
}

// refuseClass is the refusal of a mode or value of class c under p, or nil:
// an auto one, and an unknown one under a Strict policy.
func refuseClass(p Policy, c modeClass, st AuthorityState) error {
	if !c.unsafe() || (c == classUnknown && !p.Strict) {
		return nil
	}
	st.HostMode, st.ReadOnly, st.State = ParseMode(string(p.Mode)), p.ReadOnly, AuthorityAgentAutonomous
	if c == classUnknown {
		st.State = AuthorityUnknown
	}
	return st.refusal(nil)
}

// refuseRelaunchFlag refuses a relaunch with an escalating flag while a
// session's policy is Ask, Plan or read-only: the flag holds for every
// session of the process.
func (b *Bridge) refuseRelaunchFlag(o LaunchOptions, sessions []*Session) error {
	flag := b.launchFlagFor(o)
	for _, s := range sessions {
		if err := refuseLaunchFlag(s.Policy(), flag); err != nil {
			return fmt.Errorf("bridge %s: relaunch: session %s: %w", b.cfg.ID, s.key, err)
		}
	}
	return nil
}
