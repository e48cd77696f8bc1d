package main

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/acphost/acphost/bridge"
	"github.com/acphost/acphost/journal"
)

//go:embed static
var static embed.FS

// serverConfig is what a server hosts.
type serverConfig struct {
	Agents    []agentSpec
	Workspace *workspace
	Journal   *journal.DB
	Terminals bool
	// Checkpoints has sessions record the workspace before and after each
	// turn (package checkpoint), for the page's Changes panel.
	Checkpoints bool
	// Auth is the sign-in method to answer agents' sign-in requests with
	// (--auth); "" leaves them to the page.
	Auth string
	// Addr is where to listen (default 127.0.0.1:0, a free port). It must
	// be a loopback address.
	Addr string
	// Log receives the server's own troubles (nil: discarded).
	Log io.Writer
	// DemoPace is the demo agent's pause between streamed pieces (0: its
	// default).
	DemoPace time.Duration
	// StartTimeout bounds each agent's start (default 2 minutes).
	StartTimeout time.Duration
	// RequestWait bounds how long an answer waits for its request to reach
	// the session's state (default 3s): a tab sees a request on its stream
	// a moment before the Host's state has folded it in.
	RequestWait time.Duration
}

// server is the web app: one bridge.Host with the journal, the agents it
// was started with, and the HTTP server of the page and its API.
type server struct {
	cfg    serverConfig
	host   *bridge.Host
	agents []*agent
	token  string
	log    *slog.Logger
	ln     net.Listener
	http   *http.Server

	// ctx ends when the server closes: it bounds the turns and the event
	// streams it runs; work counts them.
	ctx    context.Context
	cancel context.CancelFunc
	work   sync.WaitGroup

	mu    sync.Mutex
	files map[string]io.Closer // the file root of each open session, by key
}

// newServer starts the agents and serves the page. Agents that fail to
// start are reported by the page; the server runs all the same.
func newServer(ctx context.Context, cfg serverConfig) (*server, error) {
	if cfg.Addr == "" {
		cfg.Addr = "127.0.0.1:0"
	}
	if cfg.StartTimeout <= 0 {
		cfg.StartTimeout = 2 * time.Minute
	}
	if cfg.RequestWait <= 0 {
		cfg.RequestWait = 3 * time.Second
	}
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	host, _, err := net.SplitHostPort(cfg.Addr)
	if err != nil || !loopbackHost(host) {
		return nil, fmt.Errorf("listen address %q: not a loopback address", cfg.Addr)
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("listening: %w", err)
	}
	s := &server{cfg: cfg, token: newToken(), ln: ln, files: map[string]io.Closer{},
		log: slog.New(slog.NewTextHandler(cfg.Log, nil))}
	s.host = bridge.NewHost(&bridge.HostOptions{Journal: cfg.Journal, Logger: s.log})
	s.ctx, s.cancel = context.WithCancel(context.WithoutCancel(ctx))
	s.work.Go(s.drainEvents)
	for i, spec := range cfg.Agents {
		s.agents = append(s.agents, &agent{spec: spec, index: i, inspect: &inspector{}})
	}
	s.work.Go(s.startAgents)
	s.http = &http.Server{Handler: guard{token: s.token, next: s.routes()},
		BaseContext: func(net.Listener) context.Context { return s.ctx }, ReadHeaderTimeout: 10 * time.Second}
	s.work.Go(func() {
		if err := s.http.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error("serving", "err", err)
		}
	})
	return s, nil
}

// startAgents starts every agent at once, beside the page, which shows
// them starting and then which ones run and which are missing.
func (s *server) startAgents() {
	var wg sync.WaitGroup
	for _, a := range s.agents {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(s.ctx, s.cfg.StartTimeout)
			defer cancel()
			if _, err := a.start(ctx, s); err != nil {
				s.log.Warn("agent did not start", "agent", a.spec.Name, "err", err)
			}
		})
	}
	wg.Wait()
}

// drainEvents reads the Host's stream for as long as it lives: a reader
// must, or the agents are held back. The page reads its events through
// subscriptions (Host.Subscribe), which replay from the journal.
func (s *server) drainEvents() {
	for ev := range s.host.Events() {
		switch ev.Kind {
		case bridge.KindExited:
			s.noteExit(ev)
		case bridge.KindAuthRequired:
			s.signIn(ev.Auth)
		}
	}
}

// URL is the page's address, token included.
func (s *server) URL() string {
	return fmt.Sprintf("http://%s/?token=%s", s.ln.Addr(), s.token)
}

// Close ends the event streams, the agents and the server; it returns when
// every goroutine it started has ended.
func (s *server) Close() error {
	s.cancel()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := s.http.Shutdown(ctx)
	if herr := s.host.Shutdown(ctx); err == nil {
		err = herr
	}
	s.work.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	for key, f := range s.files {
		f.Close()
		delete(s.files, key)
	}
	return err
}

// routes is the page and its API.
func (s *server) routes() http.Handler {
	mux := http.NewServeMux()
	page, err := fs.Sub(static, "static")
	if err != nil {
		panic(err) // the embedded directory is part of the binary
	}
	mux.Handle("GET /", noStore(http.FileServerFS(page)))
	mux.HandleFunc("GET /api/events", s.handleEvents)
	mux.HandleFunc("GET /api/agents", s.handleAgents)
	mux.HandleFunc("GET /api/agents/{agent}/inspector", s.handleInspector)
	mux.HandleFunc("POST /api/auth", s.handleAuth)
	mux.HandleFunc("GET /api/sessions", s.handleSessions)
	mux.HandleFunc("POST /api/sessions", s.handleNewSession)
	mux.HandleFunc("GET /api/sessions/{key}", s.handleSessionState)
	mux.HandleFunc("POST /api/sessions/{key}/open", s.handleOpen)
	mux.HandleFunc("POST /api/sessions/{key}/prompt", s.handlePrompt)
	mux.HandleFunc("POST /api/sessions/{key}/cancel", s.handleCancel)
	mux.HandleFunc("POST /api/sessions/{key}/permission", s.handlePermission)
	mux.HandleFunc("POST /api/sessions/{key}/elicitation", s.handleElicitation)
	mux.HandleFunc("POST /api/sessions/{key}/policy", s.handlePolicy)
	mux.HandleFunc("POST /api/sessions/{key}/consent", s.handleConsent)
	mux.HandleFunc("POST /api/sessions/{key}/agent-mode", s.handleAgentMode)
	mux.HandleFunc("POST /api/sessions/{key}/config", s.handleConfig)
	mux.HandleFunc("POST /api/sessions/{key}/compact", s.handleCompact)
	mux.HandleFunc("POST /api/sessions/{key}/close", s.handleClose)
	mux.HandleFunc("POST /api/sessions/{key}/queue", s.handleEnqueue)
	mux.HandleFunc("POST /api/sessions/{key}/queue/move", s.handleQueueMove)
	mux.HandleFunc("POST /api/sessions/{key}/queue/remove", s.handleQueueRemove)
	mux.HandleFunc("POST /api/sessions/{key}/queue/clear", s.handleQueueClear)
	mux.HandleFunc("POST /api/sessions/{key}/queue/resume", s.handleQueueResume)
	mux.HandleFunc("POST /api/sessions/{key}/steer", s.handleSteer)
	mux.HandleFunc("POST /api/sessions/{key}/fork", s.handleFork)
	mux.HandleFunc("GET /api/sessions/{key}/diff", s.handleTurnDiff)
	mux.HandleFunc("POST /api/sessions/{key}/restore", s.handleRestore)
	mux.HandleFunc("POST /api/sessions/{key}/revert", s.handleRevert)
	return mux
}

// noStore keeps the browser from caching the page across server runs,
// whose tokens differ.
func noStore(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		h.ServeHTTP(w, r)
	})
}
