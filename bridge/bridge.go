package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/bridge/terminal"
	"github.com/acphost/acphost/internal/wire"
)

// Errors a caller can branch on.
var (
	// ErrBusy: a turn is already running in the session.
	ErrBusy = errors.New("bridge: a turn is already running")
	// ErrClosed: the bridge or host was closed.
	ErrClosed = errors.New("bridge: closed")
	// ErrUnusable: the session could not be set up safely (for example its
	// directory grants could not be synchronised) and refuses prompts.
	ErrUnusable = errors.New("bridge: session unusable")
)

// Bridge is one agent process and its sessions. When the process dies the
// Bridge reports it and stays usable: the next prompt starts a new process
// and resumes the session natively where the agent can.
type Bridge struct {
	cfg      Config
	host     *Host
	provider *Provider
	logger   *slog.Logger
	clock    Clock

	startMu sync.Mutex // serialises process starts
	routeMu sync.Mutex // orders update delivery against session registration
	// deltaScratch is routeRun's, under routeMu: the deltas of a run of
	// notifications, for emitDeltas.
	deltaScratch []wire.TextDelta

	mu       sync.Mutex
	conn     *acpclient.Conn
	agent    *acpclient.InitializeResponse
	sessions map[string]*Session // by current native id: where updates go
	open     map[string]*Session // by host key: opened and not closed
	early    *earlyBuffer        // updates for sessions not yet known
	closed   bool
	// earlyTimer purges expired early updates; earlyTimerGen tells a
	// stopped timer's late call apart from the current one.
	earlyTimer    Timer
	earlyTimerGen uint64
	running       sync.WaitGroup // exit watchers

	permSeq atomic.Uint64
	pending pendingRequests // requests waiting on the user outside any session
	authMu  sync.Mutex      // one sign-in at a time
	authSeq atomic.Uint64

	terminals terminal.Set // the agent's commands (Config.Terminals)
}

func newBridge(h *Host, cfg Config) *Bridge {
	b := &Bridge{cfg: cfg, host: h, provider: cfg.Provider, logger: cfg.Logger, clock: cfg.Clock,
		sessions: map[string]*Session{}, open: map[string]*Session{}, early: newEarlyBuffer(cfg.EarlyUpdates)}
	if b.provider == nil {
		b.provider = &Provider{}
	}
	if b.logger == nil {
		b.logger = slog.New(slog.DiscardHandler)
	}
	if b.clock == nil {
		b.clock = realClock{}
	}
	if b.cfg.InactivityTimeout <= 0 {
		b.cfg.InactivityTimeout = DefaultInactivityTimeout
	}
	if b.cfg.CancelGrace <= 0 {
		b.cfg.CancelGrace = DefaultCancelGrace
	}
	// The Host's queue already buffers for a slow consumer; a small
	// per-agent budget keeps memory bounded with many agents.
	conn := acpclient.ConnOptions{MaxQueuedBytes: DefaultAgentQueueBytes}
	if cfg.Conn != nil {
		conn = *cfg.Conn
	}
	if conn.Logger == nil {
		conn.Logger = cfg.Logger
	}
	if conn.Budget == nil {
		conn.Budget = h.budget // the Host-wide bound (HostOptions.MaxQueuedBytes)
	}
	conn.WireTrace = conn.WireTrace || cfg.WireTrace
	b.cfg.Conn = &conn
	return b
}

// ID returns the bridge's id.
func (b *Bridge) ID() string { return b.cfg.ID }

// InitializeResponse returns the running process's answer to initialize
// (its capabilities, AgentInfo and sign-in methods), or nil when no process
// runs.
func (b *Bridge) InitializeResponse() *acpclient.InitializeResponse {
	if b.liveConn() == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.agent
}

// Running reports whether the agent process is up.
func (b *Bridge) Running() bool { return b.liveConn() != nil }

// liveConn returns the running connection, or nil when there is none or it
// has ended (its process may still be stopping: see ensure).
func (b *Bridge) liveConn() *acpclient.Conn {
	b.mu.Lock()
	conn := b.conn
	b.mu.Unlock()
	if conn == nil || conn.Err() != nil {
		return nil
	}
	return conn
}

// ensure returns the running connection, starting the agent if needed.
func (b *Bridge) ensure(ctx context.Context) (*acpclient.Conn, error) {
	b.startMu.Lock()
	defer b.startMu.Unlock()
	b.mu.Lock()
	conn, closed := b.conn, b.closed
	b.mu.Unlock()
	if closed {
		return nil, ErrClosed
	}
	if conn != nil && conn.Err() == nil {
		return conn, nil
	}
	if conn != nil {
		// The connection has ended but its process may still be stopping
		// (Done waits until it is gone): start the successor only then, so
		// two agents never run for one bridge, and never hand out the dead
		// connection to a call made right after a crash.
		select {
		case <-conn.Done():
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return b.start(ctx)
}

// start launches the process and performs initialize.
func (b *Bridge) start(ctx context.Context) (*acpclient.Conn, error) {
	client := &agentClient{b: b}
	var served acpclient.Client = client
	if len(b.cfg.ElicitationModes) > 0 {
		served = &elicitingClient{agentClient: client} // advertised only when the app renders them
	}
	served = b.withTerminals(served, client)
	conn, err := acpclient.Connect(ctx, b.cfg.Transport, served, b.cfg.Conn)
	if err != nil {
		return nil, fmt.Errorf("bridge %s: starting agent: %w", b.cfg.ID, err)
	}
	client.conn = conn
	info := b.cfg.ClientInfo
	if info == nil {
		info = &acpclient.Implementation{Name: "acphost", Version: "0.1.0"}
	}
	req := &acpclient.InitializeRequest{ClientInfo: info, Meta: b.cfg.InitializeMeta}
	if err := b.clientCapabilities(&req.ClientCapabilities); err != nil {
		conn.Close()
		<-conn.Done()
		return nil, err
	}
	resp, err := conn.Initialize(ctx, req)
	if err != nil {
		conn.Close()
		<-conn.Done()
		// An agent that dies before it answers may lack a key it was not
		// given.
		return nil, b.withWithheld(fmt.Errorf("bridge %s: %w", b.cfg.ID, err), nil) // acpclient names the method
	}
	b.mu.Lock()
	b.conn, b.agent = conn, resp
	b.mu.Unlock()
	b.running.Add(1)
	go b.watchExit(conn)
	return conn, nil
}

// watchExit reports the end of a process, after any turn it broke has
// reported its own end.
func (b *Bridge) watchExit(conn *acpclient.Conn) {
	defer b.running.Done()
	<-conn.Done()
	b.mu.Lock()
	if b.conn == conn {
		b.conn = nil
	}
	sessions := make([]*Session, 0, len(b.sessions))
	for _, s := range b.sessions {
		sessions = append(sessions, s)
	}
	closed := b.closed
	b.mu.Unlock()
	b.terminals.End(ofConn(conn)) // the agent's commands die with it
	for _, s := range sessions {
		s.cancelPending(errAgentExited)
		s.turns.waitEnded()
	}
	var cause error
	if err := conn.Err(); err != nil && errors.Unwrap(err) != nil {
		cause = err
	}
	if !closed || cause != nil {
		b.emit(Event{Kind: KindExited, Err: cause})
	} else {
		b.emit(Event{Kind: KindExited})
	}
}

// Close ends the agent process and its sessions; it returns when the
// process is gone and its events have been queued. The sessions are closed
// as Session.Close would (their keys can be opened again, their records
// stay), without telling the agent, which is gone, and without
// session_closed events: the exited event says they ended.
func (b *Bridge) Close() error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil
	}
	b.closed = true
	b.closeEarlyLocked()
	conn := b.conn
	sessions := make([]*Session, 0, len(b.sessions))
	for _, s := range b.sessions {
		sessions = append(sessions, s)
	}
	b.mu.Unlock()
	b.pending.abandonAll(ErrClosed)
	for _, s := range sessions {
		s.cancelPending(ErrClosed)
	}
	if conn != nil {
		conn.Close()
	}
	b.running.Wait()
	b.terminals.Close()
	for _, s := range b.openSessions() {
		s.close(context.Background(), false) // no turn runs once the process is gone
	}
	return nil
}

// kill ends the current process without closing the bridge (watchdog).
func (b *Bridge) kill(conn *acpclient.Conn) {
	b.logger.Warn("bridge: killing unresponsive agent", "agent", b.cfg.ID)
	conn.Close()
}

// emit stamps an event with the bridge's id and time and queues it.
func (b *Bridge) emit(ev Event) { b.emitPtr(&ev) }

// emitPtr is emit for the hot path: ev is changed and not kept.
func (b *Bridge) emitPtr(ev *Event) {
	ev.Bridge = b.cfg.ID
	if ev.Time.IsZero() {
		ev.Time = b.clock.Now()
	}
	b.host.events.pushPtr(ev)
}

// session returns a known session.
func (b *Bridge) session(id string) *Session {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.sessions[id]
}

// Session returns the open session with the given host key or agent
// session id, current or past (a session whose restarted agent could not
// resume it is still found by the id it had), or nil.
func (b *Bridge) Session(id string) *Session {
	if s := b.session(id); s != nil {
		return s
	}
	for _, s := range b.openSessions() {
		if s.key == id || s.hadNative(id) {
			return s
		}
	}
	return nil
}

// openSessions returns the sessions opened and not closed.
func (b *Bridge) openSessions() []*Session {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]*Session, 0, len(b.open))
	for _, s := range b.open {
		out = append(out, s)
	}
	return out
}

// forget removes a closed (or never opened) session from the bridge, with
// any updates still held for it. routeMu makes sure no update is being
// delivered to it meanwhile.
func (b *Bridge) forget(s *Session) {
	b.routeMu.Lock()
	defer b.routeMu.Unlock()
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.open[s.key] == s {
		delete(b.open, s.key)
	}
	if s.id != "" && b.sessions[s.id] == s {
		delete(b.sessions, s.id)
		b.claimEarlyLocked(s.id)
	}
}

// register makes a session known and replays updates that arrived for it
// before its id was (updates before session/new answers). The bridge lock
// is held throughout, so they stay ahead of any later update.
func (b *Bridge) register(s *Session) {
	b.routeMu.Lock()
	defer b.routeMu.Unlock()
	b.mu.Lock()
	b.sessions[s.id] = s
	early := b.claimEarlyLocked(s.id)
	b.mu.Unlock()
	for _, u := range early {
		s.handleUpdate(u.Note, u.Raw, b.clock.Now())
	}
}

func (b *Bridge) unregisterSession(id string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.sessions, id)
}

// agentClient serves one connection's agent→client calls. A new one is
// made per process so a dead process's stragglers cannot touch the next.
type agentClient struct {
	b    *Bridge
	conn *acpclient.Conn
}

// SessionUpdate delivers one update as a run of one (see Updates). The
// connection hands the bridge runs; this serves the Client interface.
func (c *agentClient) SessionUpdate(ctx context.Context, n *acpclient.SessionNotification) {
	u := runUpdate{Note: n}
	if unk, ok := n.Update.(*acpclient.UnknownUpdate); ok {
		u.Raw = unk.Raw
	}
	c.Updates(ctx, []runUpdate{u})
}

// Updates delivers a run of updates that arrived back to back, reading
// the clock once for the run: its text events share the run's time, which
// is also the watchdog's sign of life. A run is consecutive pieces of one
// session's streamed messages, or one other notification (see
// wire.Receiver), so the time is that of its delivery. Consecutive text deltas of
// one session in it are emitted together (routeRun), under one lock of the
// session and one of the queue. routeMu, not mu, is held while the run is
// delivered (which may wait on a slow consumer): register's replay of
// early updates cannot interleave with it, and the app can still query the
// bridge meanwhile.
func (c *agentClient) Updates(ctx context.Context, run []runUpdate) {
	b := c.b
	b.routeMu.Lock()
	defer b.routeMu.Unlock()
	b.routeRun(run, b.clock.Now())
}

// route hands an update received at now to its session, or holds it until
// the session is known. Called with routeMu held.
func (b *Bridge) route(u *runUpdate, now time.Time) {
	n := u.Note
	b.mu.Lock()
	s := b.sessions[n.SessionID]
	if s == nil {
		err := b.holdEarlyLocked(u)
		b.mu.Unlock()
		if err != nil {
			b.reportEarlyDrop(err)
		}
		return
	}
	b.mu.Unlock()
	s.handleUpdate(n, u.Raw, now)
}

func (c *agentClient) RequestPermission(ctx context.Context, req *acpclient.RequestPermissionRequest, reply func(*acpclient.RequestPermissionResponse, error)) {
	s := c.b.session(req.SessionID)
	if s == nil {
		reply(acpclient.PermissionCancelled(), nil) // fail closed
		return
	}
	s.handlePermission(ctx, req, reply)
}

func (c *agentClient) ReadTextFile(ctx context.Context, req *acpclient.ReadTextFileRequest) (*acpclient.ReadTextFileResponse, error) {
	s := c.b.session(req.SessionID)
	if s == nil {
		return nil, acpclient.NewError(acpclient.CodeInvalidParams, "unknown session %q", req.SessionID)
	}
	return s.files.readTextFile(ctx, req)
}

func (c *agentClient) WriteTextFile(ctx context.Context, req *acpclient.WriteTextFileRequest) error {
	s := c.b.session(req.SessionID)
	if s == nil {
		return acpclient.NewError(acpclient.CodeInvalidParams, "unknown session %q", req.SessionID)
	}
	return s.files.writeTextFile(ctx, req)
}

func (c *agentClient) HandleExtension(ctx context.Context, method string, params json.RawMessage) (any, error) {
	return nil, acpclient.NewError(acpclient.CodeMethodNotFound, "method not found: %s", method)
}

// HandleExtensionNotification turns vendor notifications into events: the
// provider's mapping first, else an ext event.
func (c *agentClient) HandleExtensionNotification(ctx context.Context, method string, params json.RawMessage) {
	b := c.b
	if b.provider.Notification != nil {
		if sid, events, handled := b.provider.Notification(method, params); handled {
			s := b.session(sid)
			for _, ev := range events {
				if s != nil {
					s.emitProviderEvent(ev)
				} else {
					ev.Session = sid
					b.emit(ev)
				}
			}
			return
		}
	}
	var p struct {
		SessionID string `json:"sessionId"`
	}
	_ = json.Unmarshal(params, &p)
	ev := Event{Kind: KindExt, Method: method, Raw: params}
	if s := b.session(p.SessionID); s != nil {
		s.emitFromAgent(ev)
		return
	}
	ev.Session = p.SessionID
	b.emit(ev)
}
