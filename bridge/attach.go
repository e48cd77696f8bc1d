package bridge

import (
	"context"
	"errors"
	"fmt"

	"github.com/acphost/acphost/acpclient"
)

// Attaching a session to the agent: loading (or creating) its native
// session, the replay a load brings, and the native ids the key has had.

// attach loads resumeID (when given and possible) or creates a session, then
// applies grants, model and effort.
func (sn *sessionNative) attach(ctx context.Context, conn *acpclient.Conn, resumeID string) (*SessionReady, error) {
	s := sn.s
	b := s.b
	sn.mu.Lock()
	defer sn.mu.Unlock()
	defer b.openStarted()() // updates held for the id to come are not purged meanwhile
	ready := &SessionReady{}
	reattaching := sn.conn != nil // attached before: the agent was restarted
	servers, err := s.native.usableMCPServers(conn)
	if err != nil {
		return nil, err
	}
	sn.servers = servers
	var setup *acpclient.SessionSetup
	if resumeID != "" {
		sn.prepareReplay(ctx, ready)
		var err error
		setup, err = sn.load(ctx, conn, resumeID)
		ready.ReplaySkipped = sn.endReplay(err == nil)
		if err == nil {
			ready.Resumed = true
		} else {
			ready.ResumeError = err.Error()
			ready.Replaced, ready.Reason = resumeID, ReplacedOnOpen
			if reattaching {
				ready.Reason = ReplacedAfterRestart
			}
			b.logger.Info("bridge: resume failed, starting a new session", "agent", b.cfg.ID, "session", resumeID, "err", err)
		}
	}
	if !ready.Resumed {
		req := &acpclient.NewSessionRequest{Cwd: s.cfg.Cwd, MCPServers: sn.servers}
		if sn.standardDirs(conn) {
			req.AdditionalDirectories = s.Grants()
		}
		resp, err := sn.newNative(ctx, conn, req)
		if acpclient.IsAuthRequired(err) && !sn.forking() {
			conn, resp, err = b.newSessionSignedIn(ctx, conn, req, err)
		} else if err != nil {
			err = fmt.Errorf("bridge %s: %w", b.cfg.ID, err) // acpclient names the method
		}
		if err != nil {
			return nil, err
		}
		s.id = resp.SessionID
		b.register(s)
		setup = &resp.SessionSetup
	}
	sn.conn = conn
	sn.noteNative(ready)
	ready.Fork = s.origin()
	ready.AgentModes, ready.Models, ready.ConfigOptions = setup.Modes, setup.Models, setup.ConfigOptions
	if ready.Models == nil && b.provider.ModelsFromInitialize != nil {
		ready.Models = b.provider.ModelsFromInitialize(conn.Agent())
	}

	if b.provider.SetExternalDirectories != nil {
		dirs := s.Grants()
		if dirs == nil {
			dirs = []string{}
		}
		if err := b.provider.SetExternalDirectories(ctx, conn, s.id, dirs); err != nil {
			// Carrying on with stale grants would break the file boundary.
			s.native.markUnusable(fmt.Errorf("%w: synchronising external directories: %v", ErrUnusable, err))
			return ready, nil
		}
	}
	if s.cfg.Model != "" {
		opts, err := s.ctl.setModel(ctx, conn, s.cfg.Model, ready)
		if err != nil {
			s.emit(Event{Kind: KindError, Err: fmt.Errorf("setting model %q: %w", s.cfg.Model, err)})
		} else if opts != nil {
			prev := ready.ConfigOptions
			ready.ConfigOptions = opts
			readyOptionsSet(ready, prev)
		}
	}
	if s.cfg.Effort != "" {
		opts, err := s.ctl.setEffort(ctx, conn, s.cfg.Effort, ready.ConfigOptions)
		if err != nil {
			s.emit(Event{Kind: KindError, Err: fmt.Errorf("setting effort %q: %w", s.cfg.Effort, err)})
		} else if opts != nil {
			prev := ready.ConfigOptions
			ready.ConfigOptions = opts
			readyOptionsSet(ready, prev)
		}
	}
	s.auth.enforceAtAttach(ctx, conn, ready)
	return ready, nil
}

// standardDirs reports whether grants travel in the standard
// additionalDirectories parameter.
func (sn *sessionNative) standardDirs(conn *acpclient.Conn) bool {
	s := sn.s
	a := conn.Agent()
	return s.b.provider.SetExternalDirectories == nil && a != nil &&
		a.AgentCapabilities.SessionCapabilities.AdditionalDirectories != nil
}

// load reopens a saved session: by session/resume, without a replay,
// when the journal holds its history already and the agent can resume
// (falling back to session/load if that fails and the agent can load);
// else by session/load, with its replay tagged as such (and dropped as
// prepareReplay arranged), or by session/resume where the agent cannot
// load.
func (sn *sessionNative) load(ctx context.Context, conn *acpclient.Conn, id string) (*acpclient.SessionSetup, error) {
	s := sn.s
	b := s.b
	if b.provider.CanResume != nil && !b.provider.CanResume(ctx, id) {
		return nil, errors.New("the agent has no transcript for this session")
	}
	a := conn.Agent()
	var dirs []string
	if sn.standardDirs(conn) {
		dirs = s.Grants()
	}
	canLoad, canResume := a.AgentCapabilities.LoadSession, a.AgentCapabilities.SessionCapabilities.Resume != nil
	s.mu.Lock()
	journaled := s.skipReplay // the journal has the history, and the app wants no replay of it
	s.mu.Unlock()
	if canResume && (journaled || !canLoad) {
		setup, err := sn.resumeNative(ctx, conn, id, dirs)
		if err == nil || !canLoad {
			return setup, err
		}
		b.logger.Info("bridge: session/resume failed, loading the session instead", "agent", b.cfg.ID, "session", id, "err", err)
	}
	if canLoad {
		return sn.loadNative(ctx, conn, id, dirs)
	}
	return nil, errors.New("the agent cannot load or resume sessions")
}

// loadNative sends session/load, with the replay it brings tagged as
// such.
func (sn *sessionNative) loadNative(ctx context.Context, conn *acpclient.Conn, id string, dirs []string) (*acpclient.SessionSetup, error) {
	s := sn.s
	s.id = id
	s.mu.Lock()
	s.replaying = true
	s.mu.Unlock()
	s.b.register(s)
	setup, err := conn.LoadSession(ctx, &acpclient.LoadSessionRequest{SessionID: id, Cwd: s.cfg.Cwd,
		MCPServers: sn.servers, AdditionalDirectories: dirs})
	s.mu.Lock()
	s.replaying = false
	s.mu.Unlock()
	if err != nil {
		s.b.unregisterSession(id)
		s.id = ""
	}
	return setup, err
}

// resumeNative sends session/resume, which replays nothing.
func (sn *sessionNative) resumeNative(ctx context.Context, conn *acpclient.Conn, id string, dirs []string) (*acpclient.SessionSetup, error) {
	s := sn.s
	s.id = id
	s.b.register(s)
	setup, err := conn.ResumeSession(ctx, &acpclient.ResumeSessionRequest{SessionID: id, Cwd: s.cfg.Cwd,
		MCPServers: sn.servers, AdditionalDirectories: dirs})
	if err != nil {
		s.b.unregisterSession(id)
		s.id = ""
	}
	return setup, err
}

func (sn *sessionNative) emitReady(ready *SessionReady) {
	s := sn.s
	s.mu.Lock()
	s.ready = ready
	s.configOptions, s.models = ready.ConfigOptions, ready.Models
	if ready.AgentModes != nil {
		s.agentMode = ready.AgentModes.CurrentModeID
	}
	s.mu.Unlock()
	s.emit(Event{Kind: KindSession, SessionReady: ready})
	s.auth.settleAuthority(nil, false)
}

// prepareReplay notes whether the Host's journal already holds the key's
// history and, unless the session asks to keep it, arranges for a load's
// replay of that history to be dropped.
func (sn *sessionNative) prepareReplay(ctx context.Context, ready *SessionReady) {
	s := sn.s
	j := s.b.host.journal
	if j == nil {
		return
	}
	last, err := j.LastSeq(ctx, s.key)
	if err != nil {
		s.b.logger.Warn("bridge: reading the journal", "agent", s.b.cfg.ID, "key", s.key, "err", err)
		return
	}
	ready.HistoryJournaled = last > 0
	s.mu.Lock()
	s.skipReplay = ready.HistoryJournaled && !s.cfg.KeepJournaledReplay
	s.replaySkipped = 0
	s.mu.Unlock()
}

// endReplay ends replay skipping and returns how many events it dropped.
// The tool rows of a dropped replay are forgotten with it, so the first
// turn does not report rows the app never saw.
func (sn *sessionNative) endReplay(loaded bool) int {
	s := sn.s
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.replaySkipped
	if loaded && n > 0 {
		s.tools = newToolTracker(s.b.provider)
	}
	s.skipReplay, s.replaySkipped = false, 0
	return n
}

// noteNative records the native id the session is now attached to in its
// history, with the reason it replaced the previous one.
func (sn *sessionNative) noteNative(ready *SessionReady) {
	s := sn.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if n := len(s.natives); n > 0 && s.natives[n-1].ID == s.id {
		return
	}
	reason := ready.Reason
	if reason != "" && ready.ResumeError != "" {
		reason += ": " + ready.ResumeError
	}
	s.natives = append(s.natives, NativeSession{ID: s.id, Reason: reason, Since: s.b.clock.Now()})
}

// reattach returns a live connection for the session, restarting the agent
// and resuming the session natively after a crash. It waits for a control
// call in flight (see sessionControl), so two callers never attach at once.
func (sn *sessionNative) reattach(ctx context.Context) (*acpclient.Conn, error) {
	s := sn.s
	if err := s.ctl.sem.LockCtx(ctx); err != nil {
		return nil, err
	}
	defer s.ctl.sem.Unlock()
	return sn.reattachLocked(ctx)
}

// reattachLocked is reattach with the control lock held. A closed session
// is never attached again.
func (sn *sessionNative) reattachLocked(ctx context.Context) (*acpclient.Conn, error) {
	s := sn.s
	if err := s.closedErr(); err != nil {
		return nil, err
	}
	if conn := s.b.liveConn(); conn != nil && conn == sn.conn {
		return conn, nil
	}
	conn, err := s.b.ensure(ctx)
	if err != nil {
		return nil, err
	}
	old := s.id
	s.b.unregisterSession(old)
	ready, err := sn.attach(ctx, conn, old)
	if err != nil {
		return nil, err
	}
	sn.emitReady(ready)
	s.rec.save()
	s.mu.Lock()
	unusable := s.unusable
	s.mu.Unlock()
	return sn.conn, unusable
}
