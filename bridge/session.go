package bridge

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/checkpoint"
)

// SessionConfig describes a session to open.
type SessionConfig struct {
	// Key is the host's key for the session: it names the session in
	// events (Event.Key), in the journal and for resume, and it never
	// changes, whatever happens to the agent's own session id. Empty: a
	// new random key. When a record is saved under the key (in the Host's
	// journal or in Store), the session takes over its identity and, unless
	// ResumeID says otherwise, resumes its native session; an empty Cwd is
	// then the record's.
	Key string
	// Cwd is the session's absolute working directory on the agent's host.
	// A resumed session keeps the directory its record names: a Cwd that
	// differs from it is refused with ErrCwdChanged, naming both, unless
	// MoveCwd says to move the session there.
	Cwd string
	// MoveCwd moves a resumed session to Cwd when its record names another
	// directory: the agent is given Cwd and the record then names it. It
	// is the app's explicit "move it", never a default.
	MoveCwd bool
	// ExternalDirectories are further directories the agent may use: the
	// session's one grant list, sent to the agent on every attach and set
	// on Files that are a GrantSetter. Session.SetGrants changes it.
	ExternalDirectories []string
	// ResumeID is a saved native session id to load; when it cannot be
	// loaded a new session is created and the SessionReady event says why.
	ResumeID string
	// Model and Effort are applied after the session opens, when non-empty.
	Model  string
	Effort string
	// MCPServers are passed to the agent.
	MCPServers []acpclient.MCPServer
	// Policy is the host's execution policy for the session; it drives the
	// write gate of Files that are a ReadOnlySetter.
	Policy Policy
	// Files serves the agent's file reads and writes. Nil, for an agent
	// that runs on this machine (its transport is an
	// acpclient.ProgramTransport, as commands and local profile launches
	// are), is a root confined to Cwd (fsroot.NewLocal), which the session
	// closes when it closes. Otherwise (an agent over SSH or behind a
	// transport that does not say, or a Cwd that cannot be a root) nil
	// refuses the agent's file calls, and the first refusal is reported as
	// an error event saying why. The session owns the read-only state and the grants of
	// Files that implement ReadOnlySetter and GrantSetter (fsroot's roots
	// do).
	Files Files
	// Store, for apps without a Host journal, persists the session's Record
	// under its Key, so the session can be resumed after an app restart.
	// With a journal the record is kept there; a Store set as well gets it
	// too. Set Key to find the record again: a random key is new every run.
	Store Store
	// KeepJournaledReplay asks for the agent's own replay of the session's
	// history, delivered marked Replay, even when the Host's journal
	// already holds events of this session's key. By default the bridge
	// then resumes the session with session/resume, which replays
	// nothing, where the agent offers it, so a long session reopens at
	// once; the app's history is the journal's. An agent that can only
	// load replays anyway, and that replay is dropped
	// (SessionReady.ReplaySkipped counts it): an app that shows the
	// journal would show every turn twice. Replayed state (commands,
	// modes, config options, title, usage) is always delivered, and a
	// replay is always asked for when the journal holds nothing of the
	// key. With KeepJournaledReplay the bridge loads (session/load) where
	// the agent can.
	KeepJournaledReplay bool
	// QueueLimit caps the prompts waiting in the session's queue
	// (Enqueue); past it Enqueue fails with ErrQueueFull. 0 means 32.
	QueueLimit int
	// Checkpoints, when set, records the workspace (Cwd, unless it says
	// another) in a git directory of its own before and after every turn,
	// reports what each turn changed as a changes event, and lets the app
	// see a turn's diff and restore the state before a turn (TurnDiff,
	// Restore, RevertFile). git runs where the agent runs: on its SSH host
	// for an agent launched over SSH, else on this machine. The zero
	// Options are the defaults: the git directory in the host's cache
	// directory, named by the workspace and the session's Key (set Key to
	// find a session's checkpoints after a restart). See package
	// checkpoint for what a checkpoint holds and what a restore does.
	Checkpoints *checkpoint.Options
	// Worktree, when set, makes the session's cwd a new git worktree of
	// the repository at Cwd, on a new branch, removed when the session is
	// deleted (see Worktree).
	Worktree *Worktree
}

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
