package bridge

import (
	"errors"
	"fmt"
	"slices"
	"time"
)

// Reasons a session was replaced by a new native session
// (SessionReady.Reason, NativeSession.Reason).
const (
	// ReplacedAfterRestart: the agent process was restarted (after a
	// crash, a sign-in or a relaunch) and could not resume the session.
	ReplacedAfterRestart = "restart"
	// ReplacedOnOpen: OpenSession was to resume a native session (its
	// ResumeID, or the record saved under its Key) and the agent could not.
	ReplacedOnOpen = "open"
)

// Errors of a session's state.
var (
	// ErrSessionClosed: the session was closed (Session.Close); open it
	// again by its key.
	ErrSessionClosed = errors.New("bridge: session closed")
	// ErrCwdChanged: a resumed session was given a working directory other
	// than the one its record names (see SessionConfig.MoveCwd).
	ErrCwdChanged = errors.New("bridge: the session was recorded in another directory")
)

// Key returns the session's host key (SessionConfig.Key), which never
// changes.
func (s *Session) Key() string { return s.key }

// ID returns the agent's current session id. It changes when a restarted
// agent cannot resume the session and a new one replaces it (see
// SessionReady.Replaced); Key does not.
func (s *Session) ID() string { return s.id }

// Bridge returns the bridge the session belongs to.
func (s *Session) Bridge() *Bridge { return s.b }

// Policy returns the session's current execution policy.
func (s *Session) Policy() Policy {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.policy
}

// emit queues an event of this session, stamped with its key, native id
// and running turn.
func (s *Session) emit(ev Event) { s.emitPtr(&ev) }

// emitPtr is emit for the hot path: ev is changed and not kept.
func (s *Session) emitPtr(ev *Event) {
	ev.Key, ev.Session = s.key, s.id
	if ev.Turn == 0 {
		ev.Turn = s.curTurn.Load()
	}
	if ev.Kind == KindTurnEnd {
		// The record's turn count, title and update time, written before
		// anyone sees the turn end (and may read the record).
		s.rec.saveProgress()
	}
	s.b.emitPtr(ev)
}

// emitFromAgent queues an event caused by the agent: it counts as activity
// for the watchdog and carries the replay and late flags.
func (s *Session) emitFromAgent(ev Event) { s.emitFromAgentAt(&ev, time.Time{}) }

// emitFromAgentAt is emitFromAgent for an event the agent caused at now
// (zero: read the clock), which is its time unless it has one, and the
// watchdog's sign of life. ev is changed and not kept.
func (s *Session) emitFromAgentAt(ev *Event, now time.Time) {
	if now.IsZero() {
		now = s.b.clock.Now()
	}
	if ev.Time.IsZero() {
		ev.Time = now
	}
	s.mu.Lock()
	if s.replaying && s.skipReplay && isHistory(ev.Kind) {
		s.replaySkipped++
		s.mu.Unlock()
		return
	}
	if ev.Kind == KindSessionInfo && ev.SessionInfo != nil && ev.SessionInfo.TitleChanged {
		s.title = ev.SessionInfo.Title
	}
	ev.Replay = s.replaying
	ev.Late = ev.Late || s.turn == nil && s.turnsEnded > 0 && !s.replaying
	if ev.Late && ev.Turn == 0 {
		ev.Turn = s.ctl.lastTurn // late updates belong to the turn that ended
	}
	if s.turn != nil {
		s.turn.watchdog.kick(now)
		s.turn.emitted = s.turn.emitted || isOutput(ev.Kind)
	}
	s.mu.Unlock()
	s.emitPtr(ev)
}

// turnOutput records that the running turn has produced output (see
// isOutput) by a way other than an event of the agent, such as a command
// it ran printing.
func (s *Session) turnOutput() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.turn != nil {
		s.turn.emitted = true
	}
}

// activity records that the agent is alive, for the watchdog.
func (s *Session) activity() {
	s.mu.Lock()
	if s.turn != nil {
		s.turn.watchdog.kick(s.b.clock.Now())
	}
	s.mu.Unlock()
}

// Ready returns how the session last opened: at OpenSession, or when a
// restarted agent reattached it (resumed or new, why not resumed, the
// native session it replaced, modes, models, config options, replay
// skipped). It is what the latest SessionReady event carried; its slices
// are shared and must not be modified.
func (s *Session) Ready() SessionReady {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ready == nil {
		return SessionReady{}
	}
	return *s.ready
}

// NativeHistory returns every native session id the session's key was
// attached to, oldest first, with why each replaced the one before.
func (s *Session) NativeHistory() []NativeSession {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.natives)
}

// closedErr is ErrSessionClosed once Close has begun.
func (s *Session) closedErr() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return fmt.Errorf("session %s: %w", s.key, ErrSessionClosed)
	}
	return nil
}

func (s *Session) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// hadNative reports whether the session was ever attached to a native id.
func (s *Session) hadNative(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.ContainsFunc(s.natives, func(n NativeSession) bool { return n.ID == id })
}

// origin returns a copy of the session's fork origin, nil for a session
// that is no fork: records and events get their own.
func (s *Session) origin() *ForkOrigin {
	if s.fork == nil {
		return nil
	}
	o := *s.fork
	return &o
}

// isOutput reports whether an event kind is output of the turn, after which
// resending the prompt would repeat work.
func isOutput(k Kind) bool {
	switch k {
	case KindText, KindThinking, KindToolStart, KindToolUpdate, KindToolEnd, KindPermission, KindTerminal:
		return true
	}
	return false
}

// Grants returns the session's external directories, as last set.
func (s *Session) Grants() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.grants)
}

// isHistory reports whether a replayed event is transcript, which a
// journal already holds, rather than the session's current state, which
// the app needs whatever it has stored.
func isHistory(k Kind) bool {
	switch k {
	case KindCommands, KindAgentMode, KindConfig, KindSessionInfo, KindUsage:
		return false
	}
	return true
}

// markUnusable notes that the session cannot go on on its connection
// (err says why) and reports it as an error event.
func (sn *sessionNative) markUnusable(err error) {
	s := sn.s
	s.mu.Lock()
	s.unusable = err
	s.mu.Unlock()
	s.emit(Event{Kind: KindError, Err: err})
}
