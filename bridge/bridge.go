package bridge

import (
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/bridge/terminal"
	"github.com/acphost/acphost/checkpoint"
	"github.com/acphost/acphost/internal/wire"
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
	// shell runs the checkpoints' and worktrees' git on the agent's SSH
	// host, one session for all of them.
	shell checkpoint.Shell
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
		b.cfg.CancelGrace = defaultCancelGrace
	}
	// The Host's queue already buffers for a slow consumer; a small
	// per-agent budget keeps memory bounded with many agents.
	conn := acpclient.ConnOptions{MaxQueuedBytes: defaultAgentQueueBytes}
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

// agentClient serves one connection's agent→client calls. A new one is
// made per process so a dead process's stragglers cannot touch the next.
type agentClient struct {
	b    *Bridge
	conn *acpclient.Conn
}

// transport is the transport the agent is started with; respawn replaces
// it under b.mu.
func (b *Bridge) transport() acpclient.Transport {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.cfg.Transport
}

// program is the program, arguments and environment the agent is started
// with, where its transport says (acpclient.ProgramTransport); empty for
// one that does not, such as an SSH agent's.
func (b *Bridge) program() (path string, args, env []string) {
	if pt, ok := b.transport().(acpclient.ProgramTransport); ok {
		return pt.Program()
	}
	return "", nil, nil
}

// Launch returns the profile launch of a bridge started with StartProfile,
// or nil.
func (b *Bridge) Launch() *Launch {
	if pt, ok := b.transport().(*profileTransport); ok {
		return pt.launch
	}
	return nil
}
