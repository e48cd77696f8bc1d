package bridge

import (
	"context"
	"errors"
	"fmt"
	"os"

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
	s.auth.recheckAuthority(false)
}

// modeTable is the table of the bridge's agent (Config.AgentModes, a
// profile's Modes), or nil.
func (b *Bridge) modeTable() *ModeTable { return b.cfg.AgentModes }

// tableLocked is the session's table: the one learned from the agent's
// own configuration, else the bridge's. s.mu is held.
func (a *sessionAuthority) tableLocked() *ModeTable {
	s := a.s
	if a.table != nil {
		return a.table
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
func (a *sessionAuthority) learn(ctx context.Context, modes []acpclient.Mode) {
	s := a.s
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
	a.table, a.learnErr = learned, err
	if err != nil {
		a.table = nil
	}
	s.mu.Unlock()
}

// authorityInputLocked is the session's current input; s.mu is held.
func (a *sessionAuthority) authorityInputLocked(esc escalation) authorityInput {
	s := a.s
	in := authorityInput{table: a.tableLocked(), policy: s.policy, mode: s.agentMode, options: s.configOptions, flag: esc.flag,
		consented: a.consented || esc.chosen, learnErr: a.learnErr}
	if s.ready != nil && s.ready.AgentModes != nil {
		in.modes = s.ready.AgentModes.AvailableModes
	}
	return in
}

// enforceAtAttach moves the agent of a session that has just been created,
// loaded or resumed, before its session event, recording the moves in
// ready; the state is reported after that event (emitReady).
func (a *sessionAuthority) enforceAtAttach(ctx context.Context, conn *acpclient.Conn, ready *SessionReady) {
	s := a.s
	flag := s.b.launchFlag()
	if ready.AgentModes != nil {
		a.learn(ctx, ready.AgentModes.AvailableModes)
	} else {
		a.learn(ctx, nil)
	}
	s.mu.Lock()
	a.dirty, a.preferPlan = false, false
	in := authorityInput{table: a.tableLocked(), policy: s.policy, options: ready.ConfigOptions, flag: flag.flag}
	s.mu.Unlock()
	if ready.AgentModes != nil {
		in.mode, in.modes = ready.AgentModes.CurrentModeID, ready.AgentModes.AvailableModes
	}
	moves, stuck := in.plan(true)
	for _, m := range moves {
		if err := a.sendMove(ctx, conn, m, ready); err != nil && m.required {
			stuck = append(stuck, err)
		}
	}
	s.mu.Lock()
	a.cause = errors.Join(stuck...)
	s.mu.Unlock()
}

// sendMove sends one move. With ready (while attaching) the result is
// recorded there; otherwise in the session, and reported as an agent_mode
// or config event.
func (a *sessionAuthority) sendMove(ctx context.Context, conn *acpclient.Conn, m authorityMove, ready *SessionReady) error {
	s := a.s
	if m.mode != "" {
		before := a.modeReports()
		if err := conn.SetMode(ctx, &acpclient.SetModeRequest{SessionID: s.id, ModeID: m.mode}); err != nil {
			return err
		}
		if ready != nil {
			mode := m.mode
			if a.modeReports() != before {
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
		a.noteAgentMode(before, m.mode)
		a.mirrorAgentMode()
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
	a.configSet(resp.ConfigOptions)
	return nil
}

// modeReports counts the modes the agent has reported itself.
func (a *sessionAuthority) modeReports() uint64 {
	s := a.s
	s.mu.Lock()
	defer s.mu.Unlock()
	return a.reports
}

// agentReportedMode records a mode the agent reported itself (an update, a
// vendor notification).
func (a *sessionAuthority) agentReportedMode(modeID string) {
	s := a.s
	s.mu.Lock()
	s.agentMode = modeID
	a.reports++
	s.mu.Unlock()
}

// noteAgentMode records a mode the agent accepted and reports it, unless
// the agent reported a mode itself while it was asked (reports was the
// count before): its own word, this one or another, stands.
func (a *sessionAuthority) noteAgentMode(reports uint64, modeID string) {
	s := a.s
	if a.modeReports() != reports {
		return
	}
	s.ctl.setAgentMode(modeID)
	s.emit(Event{Kind: KindAgentMode, AgentMode: modeID})
}

// settleAuthority judges the session as it is now, records the refusal
// while it is blocked (cause: why moving failed), and reports the state
// when it changed. With stopTurn a running turn of a blocked session is
// cancelled: the agent acts unasked and the host cannot stop it otherwise.
func (a *sessionAuthority) settleAuthority(cause error, stopTurn bool) {
	s := a.s
	a.settleMu.Lock()
	defer a.settleMu.Unlock()
	flag := s.b.launchFlag()
	s.mu.Lock()
	if cause == nil {
		cause = a.cause
	}
	a.cause = nil
	st := a.authorityInputLocked(flag).judge()
	a.refusal = nil
	if st.Blocked {
		if cause != nil {
			st.Reason += "; the agent could not be moved: " + cause.Error()
		}
		a.refusal = st.refusal(cause)
	}
	changed := a.state == nil || *a.state != st
	a.state = &st
	a.opened = true
	turn := s.turn
	s.mu.Unlock()
	if changed {
		report := st
		s.emit(Event{Kind: KindAuthority, Authority: &report})
		a.regovernPending()
	}
	if st.Blocked && stopTurn && turn != nil {
		s.turns.cancelTurn(turn)
	}
}

// recheckAuthority runs after a change the session did not make itself:
// the agent reported a mode or config change, or the app changed the
// policy (preferPlan: host Plan's plan mode is wanted). The state is
// reported at once when nothing is to be moved; otherwise the session's
// worker moves the agent (this may run on the connection's dispatch
// goroutine, which must not wait for an answer), and a Prompt meanwhile
// waits for it.
func (a *sessionAuthority) recheckAuthority(preferPlan bool) {
	s := a.s
	flag := s.b.launchFlag()
	s.mu.Lock()
	if !a.opened || s.closing || s.replaying {
		s.mu.Unlock()
		return
	}
	in := a.authorityInputLocked(flag)
	moves, _ := in.plan(preferPlan)
	if len(moves) == 0 && !in.judge().Blocked && !a.dirty {
		s.mu.Unlock()
		a.settleAuthority(nil, false)
		return
	}
	a.dirty = true
	a.preferPlan = a.preferPlan || preferPlan
	a.startAuthorityWorkerLocked()
	s.mu.Unlock()
}

// startAuthorityWorkerLocked starts the worker, or has the running one go
// round again. s.mu is held and the session is not closing.
func (a *sessionAuthority) startAuthorityWorkerLocked() {
	if a.running {
		a.again = true
		return
	}
	if a.ctx == nil {
		a.ctx, a.cancel = context.WithCancel(context.Background())
	}
	a.running = true
	a.wg.Add(1)
	go a.authorityWorker(a.ctx)
}

// authorityWorker makes the due moves, one control call at a time, until
// none are due; stopAuthority ends it.
func (a *sessionAuthority) authorityWorker(ctx context.Context) {
	s := a.s
	defer a.wg.Done()
	for {
		if err := s.ctl.sem.LockCtx(ctx); err != nil {
			s.mu.Lock()
			a.running = false
			s.mu.Unlock()
			return
		}
		a.enforceLocked(ctx, true)
		s.ctl.sem.Unlock()
		s.mu.Lock()
		if !a.again || s.closing {
			a.running = false
			s.mu.Unlock()
			return
		}
		a.again = false
		s.mu.Unlock()
	}
}

// stopAuthority ends the worker, for Close.
func (a *sessionAuthority) stopAuthority() {
	s := a.s
	s.mu.Lock()
	cancel := a.cancel
	s.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	a.wg.Wait()
}

// enforceLocked makes the due moves on the session's live connection, with
// the control lock held, and settles the state. A session whose agent is
// not running keeps them due: attaching it again enforces anyway.
func (a *sessionAuthority) enforceLocked(ctx context.Context, stopTurn bool) {
	s := a.s
	s.native.mu.Lock()
	conn := s.native.conn
	s.native.mu.Unlock()
	if conn == nil || conn != s.b.liveConn() {
		return
	}
	flag := s.b.launchFlag()
	s.mu.Lock()
	if !a.dirty {
		s.mu.Unlock()
		return
	}
	prefer := a.preferPlan
	a.dirty, a.preferPlan = false, false
	moves, stuck := a.authorityInputLocked(flag).plan(prefer)
	if len(moves) > 0 && stopTurn && !prefer {
		if a.reverts++; a.reverts > maxAgentReverts {
			moves = nil
			stuck = append(stuck, fmt.Errorf("the agent switched itself back %d times", maxAgentReverts))
		}
	}
	s.mu.Unlock()
	for _, m := range moves {
		if err := a.sendMove(ctx, conn, m, nil); err != nil && m.required {
			stuck = append(stuck, err)
		}
	}
	a.settleAuthority(errors.Join(stuck...), stopTurn)
}

// launchFlagFor is the escalating flag launch options o would have.
func (b *Bridge) launchFlagFor(o LaunchOptions) string {
	t := b.modeTable()
	if t == nil || t.LaunchEscalation == nil {
		return ""
	}
	return t.LaunchEscalation(o)
}
