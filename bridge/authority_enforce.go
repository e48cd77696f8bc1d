package bridge

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"

	"github.com/acphost/acphost/acpclient"
)

// This file enforces the host's mode over the agent's own modes (see
// Authority and the package doc): it moves an agent that would act unasked
// into a mode that asks, when the session opens, when the agent reports a
// change, when the app changes the policy; refuses the app's own choice of
// such a mode; and makes the session fail closed when the agent cannot be
// moved. The judging itself is in authority_judge.go.

// maxAgentReverts bounds how often the bridge moves an agent back after it
// switched itself to a mode that acts unasked, between two prompts: an
// agent that keeps switching back is not chased forever, the session is
// blocked instead.
const maxAgentReverts = 8

// sessionAuthority is a session's authority state and its enforcement.
// Guarded by Session.mu, except wg and settleMu.
type sessionAuthority struct {
	// settleMu orders judging with reporting, so the last authority event
	// is the state Authority returns.
	settleMu   sync.Mutex
	reverts    int             // moves after the agent's own changes since the last prompt
	reports    uint64          // modes the agent reported itself, counted
	table      *ModeTable      // learned at attach (ModeTable.Learn); nil: the bridge's
	learnErr   error           // why learning failed
	consented  bool            // Session.GrantAutonomy was called
	opened     bool            // the session has opened: changes are enforced
	state      *AuthorityState // the state last reported
	refusal    error           // non-nil while blocked: what Prompt returns
	dirty      bool            // moves are due (the worker or the next prompt makes them)
	preferPlan bool            // the due moves include host Plan's plan mode
	cause      error           // why moving at attach failed, for the state reported next
	running    bool            // the worker runs
	again      bool            // run the worker once more
	ctx        context.Context // ends the worker when the session closes
	cancel     context.CancelFunc
	wg         sync.WaitGroup
}

// Authority returns the session's authority state as last reported (the
// latest authority event): whether the host can interpose on what the
// agent does, and why. Before the session opens it is the zero state.
func (s *Session) Authority() AuthorityState {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.auth.state == nil {
		return AuthorityState{}
	}
	return *s.auth.state
}

// GrantAutonomy is the app's consent, for this session, to an agent that
// acts without asking and cannot be moved to a mode that asks (an
// authority event with ConsentNeeded): in host Build the session then
// takes prompts and reports agent-autonomous, naming the mode, option or
// flag. Ask, Plan and the read-only policy still refuse such an agent.
// The consent holds until the session closes and is never saved: a
// session opened again asks again. Granting before it is asked (a CLI
// flag that answers the question in advance) is allowed.
func (s *Session) GrantAutonomy() {
	s.mu.Lock()
	s.auth.consented = true
	s.mu.Unlock()
	s.recheckAuthority(false)
}

// modeTable is the table of the bridge's agent (Config.AgentModes, a
// profile's Modes), or nil.
func (b *Bridge) modeTable() *ModeTable { return b.cfg.AgentModes }

// tableLocked is the session's table: the one learned from the agent's
// own configuration, else the bridge's. s.mu is held.
func (s *Session) tableLocked() *ModeTable {
	if s.auth.table != nil {
		return s.auth.table
	}
	return s.b.modeTable()
}

// escalation is the running launch's escalating flag, if any, and
// whether it comes from the app's vendor options: the table reports one
// from the vendor options alone (see ModeTable.LaunchEscalation), which
// counts as the app's consent.
type escalation struct {
	flag   string
	chosen bool
}

// launchFlag is the escalation of the running launch.
func (b *Bridge) launchFlag() escalation {
	l := b.Launch()
	if l == nil {
		return escalation{}
	}
	o := l.Options()
	e := escalation{flag: b.launchFlagFor(o)}
	if e.flag != "" {
		e.chosen = b.launchFlagFor(LaunchOptions{Vendor: o.Vendor}) != ""
	}
	return e
}

// learn runs the table's Learn for a session attaching with modes, on the
// agent's host, and records what it made.
func (s *Session) learn(ctx context.Context, modes []acpclient.Mode) {
	t := s.b.modeTable()
	if t == nil || t.Learn == nil {
		return
	}
	var fsys HostFS = LocalFS{}
	home, _ := os.UserHomeDir()
	if l := s.b.Launch(); l != nil {
		o := l.Options()
		fsys, home = o.HostFS(), o.HostHome()
	}
	learned, err := t.Learn(ctx, fsys, home, s.cfg.Cwd, modes)
	s.mu.Lock()
	s.auth.table, s.auth.learnErr = learned, err
	if err != nil {
		s.auth.table = nil
	}
	s.mu.Unlock()
}

// launchFlagFor is the escalating flag launch options o would have.
func (b *Bridge) launchFlagFor(o LaunchOptions) string {
	t := b.modeTable()
	if t == nil || t.LaunchEscalation == nil {
		return ""
	}
	return t.LaunchEscalation(o)
}

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

// authorityInputLocked is the session's current input; s.mu is held.
func (s *Session) authorityInputLocked(esc escalation) authorityInput {
	in := authorityInput{table: s.tableLocked(), policy: s.policy, mode: s.agentMode, options: s.configOptions, flag: esc.flag,
		consented: s.auth.consented || esc.chosen, learnErr: s.auth.learnErr}
	if s.ready != nil && s.ready.AgentModes != nil {
		in.modes = s.ready.AgentModes.AvailableModes
	}
	return in
}

// enforceAtAttach moves the agent of a session that has just been created,
// loaded or resumed, before its session event, recording the moves in
// ready; the state is reported after that event (emitReady).
func (s *Session) enforceAtAttach(ctx context.Context, conn *acpclient.Conn, ready *SessionReady) {
	flag := s.b.launchFlag()
	if ready.AgentModes != nil {
		s.learn(ctx, ready.AgentModes.AvailableModes)
	} else {
		s.learn(ctx, nil)
	}
	s.mu.Lock()
	s.auth.dirty, s.auth.preferPlan = false, false
	in := authorityInput{table: s.tableLocked(), policy: s.policy, options: ready.ConfigOptions, flag: flag.flag}
	s.mu.Unlock()
	if ready.AgentModes != nil {
		in.mode, in.modes = ready.AgentModes.CurrentModeID, ready.AgentModes.AvailableModes
	}
	moves, stuck := in.plan(true)
	for _, m := range moves {
		if err := s.sendMove(ctx, conn, m, ready); err != nil && m.required {
			stuck = append(stuck, err)
		}
	}
	s.mu.Lock()
	s.auth.cause = errors.Join(stuck...)
	s.mu.Unlock()
}

// sendMove sends one move. With ready (while attaching) the result is
// recorded there; otherwise in the session, and reported as an agent_mode
// or config event.
func (s *Session) sendMove(ctx context.Context, conn *acpclient.Conn, m authorityMove, ready *SessionReady) error {
	if m.mode != "" {
		before := s.modeReports()
		if err := conn.SetMode(ctx, &acpclient.SetModeRequest{SessionID: s.id, ModeID: m.mode}); err != nil {
			return err
		}
		if ready != nil {
			mode := m.mode
			if s.modeReports() != before {
				mode = s.AgentMode() // what the agent said meanwhile stands
			}
			modes := acpclient.ModeState{}
			if ready.AgentModes != nil {
				modes = *ready.AgentModes // shared with the agent's answer: never changed in place
			}
			modes.CurrentModeID = mode
			ready.AgentModes = &modes
			readyModeSet(ready)
			return nil
		}
		s.noteAgentMode(before, m.mode)
		s.mirrorAgentMode()
		return nil
	}
	req := *m.option
	req.SessionID = s.id
	resp, err := conn.SetConfigOption(ctx, &req)
	if err != nil {
		return err
	}
	if ready != nil {
		prev := ready.ConfigOptions
		ready.ConfigOptions = resp.ConfigOptions
		readyOptionsSet(ready, prev)
		return nil
	}
	s.configSet(resp.ConfigOptions)
	return nil
}

// modeReports counts the modes the agent has reported itself.
func (s *Session) modeReports() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.auth.reports
}

// agentReportedMode records a mode the agent reported itself (an update, a
// vendor notification).
func (s *Session) agentReportedMode(modeID string) {
	s.mu.Lock()
	s.agentMode = modeID
	s.auth.reports++
	s.mu.Unlock()
}

// noteAgentMode records a mode the agent accepted and reports it, unless
// the agent reported a mode itself while it was asked (reports was the
// count before): its own word, this one or another, stands.
func (s *Session) noteAgentMode(reports uint64, modeID string) {
	if s.modeReports() != reports {
		return
	}
	s.setAgentMode(modeID)
	s.emit(Event{Kind: KindAgentMode, AgentMode: modeID})
}

// settleAuthority judges the session as it is now, records the refusal
// while it is blocked (cause: why moving failed), and reports the state
// when it changed. With stopTurn a running turn of a blocked session is
// cancelled: the agent acts unasked and the host cannot stop it otherwise.
func (s *Session) settleAuthority(cause error, stopTurn bool) {
	s.auth.settleMu.Lock()
	defer s.auth.settleMu.Unlock()
	flag := s.b.launchFlag()
	s.mu.Lock()
	if cause == nil {
		cause = s.auth.cause
	}
	s.auth.cause = nil
	st := s.authorityInputLocked(flag).judge()
	s.auth.refusal = nil
	if st.Blocked {
		if cause != nil {
			st.Reason += "; the agent could not be moved: " + cause.Error()
		}
		s.auth.refusal = st.refusal(cause)
	}
	changed := s.auth.state == nil || *s.auth.state != st
	s.auth.state = &st
	s.auth.opened = true
	turn := s.turn
	s.mu.Unlock()
	if changed {
		report := st
		s.emit(Event{Kind: KindAuthority, Authority: &report})
		s.regovernPending()
	}
	if st.Blocked && stopTurn && turn != nil {
		s.cancelTurn(turn)
	}
}

// recheckAuthority runs after a change the session did not make itself:
// the agent reported a mode or config change, or the app changed the
// policy (preferPlan: host Plan's plan mode is wanted). The state is
// reported at once when nothing is to be moved; otherwise the session's
// worker moves the agent (this may run on the connection's dispatch
// goroutine, which must not wait for an answer), and a Prompt meanwhile
// waits for it.
func (s *Session) recheckAuthority(preferPlan bool) {
	flag := s.b.launchFlag()
	s.mu.Lock()
	if !s.auth.opened || s.closing || s.replaying {
		s.mu.Unlock()
		return
	}
	in := s.authorityInputLocked(flag)
	moves, _ := in.plan(preferPlan)
	if len(moves) == 0 && !in.judge().Blocked && !s.auth.dirty {
		s.mu.Unlock()
		s.settleAuthority(nil, false)
		return
	}
	s.auth.dirty = true
	s.auth.preferPlan = s.auth.preferPlan || preferPlan
	s.startAuthorityWorkerLocked()
	s.mu.Unlock()
}

// startAuthorityWorkerLocked starts the worker, or has the running one go
// round again. s.mu is held and the session is not closing.
func (s *Session) startAuthorityWorkerLocked() {
	if s.auth.running {
		s.auth.again = true
		return
	}
	if s.auth.ctx == nil {
		s.auth.ctx, s.auth.cancel = context.WithCancel(context.Background())
	}
	s.auth.running = true
	s.auth.wg.Add(1)
	go s.authorityWorker(s.auth.ctx)
}

// authorityWorker makes the due moves, one control call at a time, until
// none are due; stopAuthority ends it.
func (s *Session) authorityWorker(ctx context.Context) {
	defer s.auth.wg.Done()
	for {
		if err := s.ctl.sem.LockCtx(ctx); err != nil {
			s.mu.Lock()
			s.auth.running = false
			s.mu.Unlock()
			return
		}
		s.enforceLocked(ctx, true)
		s.ctl.sem.Unlock()
		s.mu.Lock()
		if !s.auth.again || s.closing {
			s.auth.running = false
			s.mu.Unlock()
			return
		}
		s.auth.again = false
		s.mu.Unlock()
	}
}

// stopAuthority ends the worker, for Close.
func (s *Session) stopAuthority() {
	s.mu.Lock()
	cancel := s.auth.cancel
	s.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	s.auth.wg.Wait()
}

// enforceLocked makes the due moves on the session's live connection, with
// the control lock held, and settles the state. A session whose agent is
// not running keeps them due: attaching it again enforces anyway.
func (s *Session) enforceLocked(ctx context.Context, stopTurn bool) {
	s.grantMu.Lock()
	conn := s.conn
	s.grantMu.Unlock()
	if conn == nil || conn != s.b.liveConn() {
		return
	}
	flag := s.b.launchFlag()
	s.mu.Lock()
	if !s.auth.dirty {
		s.mu.Unlock()
		return
	}
	prefer := s.auth.preferPlan
	s.auth.dirty, s.auth.preferPlan = false, false
	moves, stuck := s.authorityInputLocked(flag).plan(prefer)
	if len(moves) > 0 && stopTurn && !prefer {
		if s.auth.reverts++; s.auth.reverts > maxAgentReverts {
			moves = nil
			stuck = append(stuck, fmt.Errorf("the agent switched itself back %d times", maxAgentReverts))
		}
	}
	s.mu.Unlock()
	for _, m := range moves {
		if err := s.sendMove(ctx, conn, m, nil); err != nil && m.required {
			stuck = append(stuck, err)
		}
	}
	s.settleAuthority(errors.Join(stuck...), stopTurn)
}

// authorityGate is the check before a turn: the due moves first, then the
// refusal of a blocked session.
func (s *Session) authorityGate(ctx context.Context) error {
	if err := s.ctl.sem.LockCtx(ctx); err != nil {
		return err
	}
	s.mu.Lock()
	s.auth.reverts = 0
	s.mu.Unlock()
	s.enforceLocked(ctx, false)
	s.ctl.sem.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.auth.refusal
}

// allowAgentMode refuses, before anything is sent, an agent mode that
// would act unasked (or that the table does not list) outside host Full.
func (s *Session) allowAgentMode(modeID string) error {
	s.mu.Lock()
	t, p := s.tableLocked(), s.policy
	s.mu.Unlock()
	if t == nil || p.hostFull() {
		return nil
	}
	return refuseClass(p, t.classifyMode(modeID), AuthorityState{AgentMode: modeID})
}

// allowConfigOption refuses, before anything is sent, a config option
// value that would let the agent act unasked outside host Full.
func (s *Session) allowConfigOption(req acpclient.SetConfigOptionRequest) error {
	s.mu.Lock()
	t, p := s.tableLocked(), s.policy
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
