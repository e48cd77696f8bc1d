package bridge

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/acphost/acphost/acpclient"
)

// SessionConfig describes a session to open.
type SessionConfig struct {
	// Key is the host's key for the session: it names the session in
	// events (Event.Key), in the journal and for resume, and it never
	// changes, whatever happens to the agent's own session id. Empty: a
	// new random key.
	Key string
	// Cwd is the session's absolute working directory on the agent's host.
	Cwd string
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
	// Files serves the agent's file reads and writes; nil refuses them.
	// The session owns the read-only state and the grants of Files that
	// implement ReadOnlySetter and GrantSetter (fsroot's roots do).
	Files Files
	// Store, with StoreKey, persists what is needed to resume the session
	// after an app restart.
	Store    Store
	StoreKey string
}

// Session is one agent session. Its methods are safe for concurrent use.
type Session struct {
	b    *Bridge
	cfg  SessionConfig
	key  string // the host key (SessionConfig.Key); never changes
	id   string
	conn *acpclient.Conn // the process the session is attached to

	turnMu ctxMutex       // held for the whole of a turn (and a compaction)
	ctl    sessionControl // turn admission, control calls; see control.go
	// grantMu orders grant changes against attaching, so the agent always
	// ends up with the latest list; it also guards conn.
	grantMu sync.Mutex

	// pending are the session's requests waiting on the user.
	pending pendingRequests

	mu        sync.Mutex
	policy    Policy
	grants    []string // the external directories; see SetGrants
	replaying bool
	turn      *turnState
	tools     *toolTracker
	usage     Usage
	unusable  error
	// configOptions and models are the latest the agent reported, for
	// SetModel and the accessors.
	configOptions []acpclient.ConfigOption
	models        *acpclient.ModelState
	agentMode     string // the agent's current session mode; see AgentMode
	turnsEnded    int    // turns answered so far; updates outside a turn after one are late

	turns   uint64        // turns started so far; guarded by turnMu
	curTurn atomic.Uint64 // the running turn's number, 0 between turns
}

// turnState is what the bridge tracks while a turn runs.
type turnState struct {
	conn      *acpclient.Conn
	watchdog  *watchdog
	number    uint64 // the turn's number (Event.Turn)
	timedOut  bool   // guarded by Session.mu
	cancelled bool   // guarded by Session.mu
	// grace ends the turn if the agent does not answer a cancel; aborted
	// says it did. Guarded by Session.mu.
	grace   Timer
	aborted bool

	// Guarded by Session.mu: whether the turn produced output, and the
	// failure held back for a retry (see holdForRetry).
	emitted bool
	held    error
	retries turnRetries

	finish     sync.Once
	stopReason string
	err        error
}

// Key returns the session's host key (SessionConfig.Key), which never
// changes.
func (s *Session) Key() string { return s.key }

// ID returns the agent's session id.
func (s *Session) ID() string { return s.id }

// Bridge returns the bridge the session belongs to.
func (s *Session) Bridge() *Bridge { return s.b }

// Policy returns the session's current execution policy.
func (s *Session) Policy() Policy {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.policy
}

// SetPolicy changes the execution policy. It applies to the next permission
// request and file write, also in a running turn; Files with a write gate
// of their own (ReadOnlySetter) are switched with it.
func (s *Session) SetPolicy(p Policy) {
	p = s.b.lockPolicy(p)
	s.mu.Lock()
	s.policy = p
	s.applyWriteGateLocked()
	s.mu.Unlock()
	s.save()
}

// OpenSession opens a session on the agent, starting the agent if needed, in
// the order the protocol and our users need: load the saved session (or
// create one), send the directory grants, then the model, then the effort.
// A SessionReady event reports the result.
func (b *Bridge) OpenSession(ctx context.Context, cfg SessionConfig) (*Session, error) {
	conn, err := b.ensure(ctx)
	if err != nil {
		return nil, err
	}
	key := cfg.Key
	if key == "" {
		key = newSessionKey()
	}
	s := &Session{b: b, cfg: cfg, key: key, policy: b.lockPolicy(cfg.Policy), tools: newToolTracker(b.provider),
		grants: slices.Clone(cfg.ExternalDirectories)}
	if g, ok := cfg.Files.(GrantSetter); ok {
		if err := g.SetGrants(ctx, s.grants); err != nil {
			return nil, fmt.Errorf("bridge %s: granting %q: %w", b.cfg.ID, s.grants, err)
		}
	}
	s.applyWriteGateLocked() // s is not shared yet
	ready, err := s.attach(ctx, conn, cfg.ResumeID)
	if err != nil {
		return nil, err
	}
	s.emitReady(ready)
	s.save()
	return s, nil
}

// attach loads resumeID (when given and possible) or creates a session, then
// applies grants, model and effort.
func (s *Session) attach(ctx context.Context, conn *acpclient.Conn, resumeID string) (*SessionReady, error) {
	b := s.b
	s.grantMu.Lock()
	defer s.grantMu.Unlock()
	defer b.openStarted()() // updates held for the id to come are not purged meanwhile
	ready := &SessionReady{}
	var setup *acpclient.SessionSetup
	if resumeID != "" {
		var err error
		setup, err = s.load(ctx, conn, resumeID)
		if err == nil {
			ready.Resumed = true
		} else {
			ready.ResumeError = err.Error()
			b.logger.Info("bridge: resume failed, starting a new session", "agent", b.cfg.ID, "session", resumeID, "err", err)
		}
	}
	if !ready.Resumed {
		req := &acpclient.NewSessionRequest{Cwd: s.cfg.Cwd, MCPServers: s.cfg.MCPServers}
		if s.standardDirs(conn) {
			req.AdditionalDirectories = s.Grants()
		}
		resp, err := conn.NewSession(ctx, req)
		if acpclient.IsAuthRequired(err) {
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
	s.conn = conn
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
			s.markUnusable(fmt.Errorf("%w: synchronising external directories: %v", ErrUnusable, err))
			return ready, nil
		}
	}
	if s.cfg.Model != "" {
		opts, err := s.setModel(ctx, conn, s.cfg.Model, ready)
		if err != nil {
			s.emit(Event{Kind: KindError, Err: fmt.Errorf("setting model %q: %w", s.cfg.Model, err)})
		} else if opts != nil {
			ready.ConfigOptions = opts
		}
	}
	if s.cfg.Effort != "" {
		opts, err := s.setEffort(ctx, conn, s.cfg.Effort, ready.ConfigOptions)
		if err != nil {
			s.emit(Event{Kind: KindError, Err: fmt.Errorf("setting effort %q: %w", s.cfg.Effort, err)})
		} else if opts != nil {
			ready.ConfigOptions = opts
		}
	}
	return ready, nil
}

// standardDirs reports whether grants travel in the standard
// additionalDirectories parameter.
func (s *Session) standardDirs(conn *acpclient.Conn) bool {
	a := conn.Agent()
	return s.b.provider.SetExternalDirectories == nil && a != nil &&
		a.AgentCapabilities.SessionCapabilities.AdditionalDirectories != nil
}

// load reopens a saved session, with its replay tagged as such.
func (s *Session) load(ctx context.Context, conn *acpclient.Conn, id string) (*acpclient.SessionSetup, error) {
	b := s.b
	if b.provider.CanResume != nil && !b.provider.CanResume(ctx, id) {
		return nil, errors.New("the agent has no transcript for this session")
	}
	a := conn.Agent()
	var dirs []string
	if s.standardDirs(conn) {
		dirs = s.Grants()
	}
	switch {
	case a.AgentCapabilities.LoadSession:
		s.id = id
		s.mu.Lock()
		s.replaying = true
		s.mu.Unlock()
		b.register(s)
		setup, err := conn.LoadSession(ctx, &acpclient.LoadSessionRequest{SessionID: id, Cwd: s.cfg.Cwd,
			MCPServers: s.cfg.MCPServers, AdditionalDirectories: dirs})
		s.mu.Lock()
		s.replaying = false
		s.mu.Unlock()
		if err != nil {
			b.unregisterSession(id)
			s.id = ""
		}
		return setup, err
	case a.AgentCapabilities.SessionCapabilities.Resume != nil:
		s.id = id
		b.register(s)
		setup, err := conn.ResumeSession(ctx, &acpclient.ResumeSessionRequest{SessionID: id, Cwd: s.cfg.Cwd,
			MCPServers: s.cfg.MCPServers, AdditionalDirectories: dirs})
		if err != nil {
			b.unregisterSession(id)
			s.id = ""
		}
		return setup, err
	}
	return nil, errors.New("the agent cannot load or resume sessions")
}

func (s *Session) emitReady(ready *SessionReady) {
	s.mu.Lock()
	s.configOptions, s.models = ready.ConfigOptions, ready.Models
	if ready.AgentModes != nil {
		s.agentMode = ready.AgentModes.CurrentModeID
	}
	s.mu.Unlock()
	s.emit(Event{Kind: KindSession, SessionReady: ready})
}

func (s *Session) markUnusable(err error) {
	s.mu.Lock()
	s.unusable = err
	s.mu.Unlock()
	s.emit(Event{Kind: KindError, Err: err})
}

// emit queues an event of this session, stamped with its key, native id
// and running turn.
func (s *Session) emit(ev Event) {
	ev.Key, ev.Session = s.key, s.id
	if ev.Turn == 0 {
		ev.Turn = s.curTurn.Load()
	}
	s.b.emit(ev)
}

// emitFromAgent queues an event caused by the agent: it counts as activity
// for the watchdog and carries the replay and late flags.
func (s *Session) emitFromAgent(ev Event) {
	s.mu.Lock()
	ev.Replay = s.replaying
	ev.Late = s.turn == nil && s.turnsEnded > 0 && !s.replaying
	if ev.Late && ev.Turn == 0 {
		ev.Turn = s.ctl.lastTurn // late updates belong to the turn that ended
	}
	if s.turn != nil {
		s.turn.watchdog.kick()
		s.turn.emitted = s.turn.emitted || isOutput(ev.Kind)
	}
	s.mu.Unlock()
	s.emit(ev)
}

// activity records that the agent is alive, for the watchdog.
func (s *Session) activity() {
	s.mu.Lock()
	if s.turn != nil {
		s.turn.watchdog.kick()
	}
	s.mu.Unlock()
}

// save writes the session's resumable state to the store.
func (s *Session) save() {
	if s.cfg.Store == nil || s.id == "" {
		return
	}
	key := s.cfg.StoreKey
	if key == "" {
		key = s.b.cfg.ID
	}
	p := s.Policy()
	rec := Record{NativeSessionID: s.id, Provider: s.b.provider.Name, Cwd: s.cfg.Cwd, Model: s.cfg.Model,
		Effort: s.cfg.Effort, Mode: string(p.Mode), ReadOnly: p.ReadOnly, ExternalDirectories: s.Grants()}
	if l := s.b.Launch(); l != nil {
		o := l.Options()
		rec.AgentMode = o.AgentMode
		if a, ok := o.Vendor.(ApprovalPolicyOption); ok {
			rec.ApprovalPolicy = a.ApprovalPolicy()
		}
	}
	if err := s.cfg.Store.Save(key, rec); err != nil {
		s.emit(Event{Kind: KindError, Err: fmt.Errorf("saving session state: %w", err)})
	}
}

// newSessionKey returns a random session key: 26 characters of base32,
// lower-cased so it reads well in URLs and file names.
func newSessionKey() string { return strings.ToLower(rand.Text()) }
