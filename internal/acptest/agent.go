package acptest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Agent is a scripted fake ACP agent. Set the exported fields before the
// first Serve; the methods are safe for concurrent use.
type Agent struct {
	// Stderr receives Stderr steps and the agent's own diagnostics (junk it
	// read, responses to unknown ids). Nil discards them.
	Stderr io.Writer
	// Record, if set, receives every line the agent reads, verbatim, one
	// per line.
	Record io.Writer
	// Exit, if set, is called by an Exit step instead of closing the
	// connection; the fakeagent binary passes os.Exit.
	Exit func(code int)

	script Script

	mu       sync.Mutex
	received []Message
	changed  chan struct{} // closed and replaced when received grows
	recordMu sync.Mutex
	stderrMu sync.Mutex
}

// NewAgent returns an agent that follows script.
func NewAgent(script Script) *Agent {
	return &Agent{script: script, changed: make(chan struct{})}
}

// Message is one message the agent received.
type Message struct {
	// ID is the raw id of a request or response; nil for a notification.
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *Error          `json:"error,omitempty"`
}

// ExitError is what Serve returns after an Exit step.
type ExitError struct{ Code int }

func (e *ExitError) Error() string {
	return "acptest: fake agent exited with code " + strconv.Itoa(e.Code)
}

// Received returns a copy of every message received so far, in order.
func (a *Agent) Received() []Message {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]Message(nil), a.received...)
}

// WaitFor returns the first received message (already received or still to
// come) for which match returns true, or ctx's error.
func (a *Agent) WaitFor(ctx context.Context, match func(Message) bool) (Message, error) {
	seen := 0
	for {
		a.mu.Lock()
		msgs, changed := a.received[seen:], a.changed
		seen = len(a.received)
		a.mu.Unlock()
		for _, m := range msgs {
			if match(m) {
				return m, nil
			}
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return Message{}, ctx.Err()
		}
	}
}

// Method returns a matcher for WaitFor that accepts messages of method.
func Method(method string) func(Message) bool {
	return func(m Message) bool { return m.Method == method }
}

func (a *Agent) addReceived(m Message) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.received = append(a.received, m)
	close(a.changed)
	a.changed = make(chan struct{})
}

// Serve speaks ACP as the agent: it reads the client's messages from r and
// writes its own to w until r ends (or, with StayAfterEOF, until ctx ends).
// When ctx ends or an Exit step runs, Serve closes r and w if they are
// io.Closers, so that a blocked read or write ends too. It returns nil after
// the end of input, *ExitError after an Exit step, ctx's error if ctx ended,
// or the read error.
func (a *Agent) Serve(ctx context.Context, r io.Reader, w io.Writer) error {
	c := &conn{
		agent:    a,
		script:   &a.script,
		r:        r,
		w:        w,
		nextID:   a.script.RequestIDs.Start,
		pending:  map[string]chan Message{},
		calls:    map[string]*call{},
		turns:    map[string]*call{},
		sessions: map[string]string{},
		authed:   map[string]bool{},
	}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	defer c.cancel()
	stop := context.AfterFunc(ctx, c.closeIO)
	defer stop()

	if err := c.run(runner{}, a.script.OnStart); err != nil && !errors.Is(err, errClosed) {
		c.logf("onStart: %v", err)
	}
	var readErr error
	if c.ctx.Err() == nil {
		readErr = c.readLoop()
	}
	if readErr == nil && a.script.StayAfterEOF {
		select {
		case <-ctx.Done():
		case <-c.ctx.Done():
		}
	}
	c.cancel()
	c.handlers.Wait()

	c.mu.Lock()
	code := c.exitCode
	c.mu.Unlock()
	switch {
	case code != nil:
		return &ExitError{Code: *code}
	case ctx.Err() != nil:
		return ctx.Err()
	}
	return readErr
}

// conn is the state of one connection.
type conn struct {
	agent  *Agent
	script *Script
	r      io.Reader
	w      io.Writer
	// ctx ends when the connection ends; every blocking step watches it.
	ctx    context.Context
	cancel context.CancelFunc
	// handlers counts the goroutines answering requests.
	handlers sync.WaitGroup

	writeMu sync.Mutex // one line at a time on w

	mu       sync.Mutex
	nextID   int64
	reports  int                     // reports sent, for their message ids
	pending  map[string]chan Message // our requests awaiting answers, by id
	calls    map[string]*call        // client requests being handled, by id
	turns    map[string]*call        // running prompt per session id
	sessions map[string]string       // known session id → cwd
	created  int                     // session/new calls so far
	authed   map[string]bool         // auth methods that succeeded
	options  []map[string]any        // current config options, once set
	exitCode *int
}

// call is a client request being handled; cancelled closes on
// session/cancel (prompts) or $/cancel_request.
type call struct {
	cancelled    chan struct{}
	once         sync.Once
	ignoreCancel bool
}

func newCall() *call { return &call{cancelled: make(chan struct{})} }

func (c *call) cancel() { c.once.Do(func() { close(c.cancelled) }) }

func (c *call) isCancelled() bool {
	select {
	case <-c.cancelled:
		return true
	default:
		return false
	}
}

// wireMessage is one JSON-RPC message as written.
type wireMessage struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  any             `json:"params,omitempty"`
	Result  any             `json:"result,omitempty"`
	Error   *Error          `json:"error,omitempty"`
}

var (
	// errClosed ends a step list because the connection is gone.
	errClosed = errors.New("acptest: connection closed")
	// errCancelled ends a step list because its request was cancelled.
	errCancelled = errors.New("acptest: cancelled")
)

func (c *conn) closeIO() {
	if cl, ok := c.r.(io.Closer); ok {
		cl.Close()
	}
	if cl, ok := c.w.(io.Closer); ok {
		cl.Close()
	}
	c.cancel()
}

// exit ends the agent for an Exit step.
func (c *conn) exit(code int) {
	c.mu.Lock()
	if c.exitCode == nil {
		c.exitCode = &code
	}
	c.mu.Unlock()
	c.writeMu.Lock() // no half-written line
	defer c.writeMu.Unlock()
	if c.agent.Exit != nil {
		c.agent.Exit(code)
	}
	c.closeIO()
}

func (c *conn) logf(format string, args ...any) {
	c.stderr("acptest: " + fmt.Sprintf(format, args...))
}

func (c *conn) stderr(text string) {
	if c.agent.Stderr == nil {
		return
	}
	c.agent.stderrMu.Lock()
	defer c.agent.stderrMu.Unlock()
	io.WriteString(c.agent.Stderr, text+"\n")
}

// send writes one message as a compact line. A marshalling error (a bad
// raw value in a Go-built script) is reported and skipped; a write error
// means the connection is gone.
func (c *conn) send(m wireMessage) error {
	m.JSONRPC = "2.0"
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		c.logf("cannot encode %s message: %v", m.Method, err)
		return nil
	}
	return c.write(buf.Bytes())
}

func (c *conn) write(b []byte) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if _, err := c.w.Write(b); err != nil {
		c.cancel()
		return errClosed
	}
	return nil
}

func (c *conn) respond(id json.RawMessage, result any, rpcErr *Error) error {
	if rpcErr != nil {
		return c.send(wireMessage{ID: id, Error: rpcErr})
	}
	if result == nil {
		result = json.RawMessage("{}")
	}
	return c.send(wireMessage{ID: id, Result: result})
}

func (c *conn) readLoop() error {
	br := bufio.NewReaderSize(c.r, 64<<10)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 && c.ctx.Err() == nil {
			c.handleLine(line)
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			if c.ctx.Err() != nil {
				return nil // we closed the input ourselves
			}
			return err
		}
	}
}

func (c *conn) handleLine(line []byte) {
	line = bytes.TrimRight(line, "\r\n")
	if len(bytes.TrimSpace(line)) == 0 {
		return
	}
	if c.agent.Record != nil {
		c.agent.recordMu.Lock()
		c.agent.Record.Write(append(line[:len(line):len(line)], '\n'))
		c.agent.recordMu.Unlock()
	}
	m, present, err := parseMessage(line)
	if err != nil {
		c.logf("unparsable line from client: %v", err)
		c.respond(json.RawMessage("null"), nil, &Error{Code: -32700, Message: "Parse error"})
		return
	}
	c.agent.addReceived(m)
	switch {
	case m.Method != "" && present["id"]:
		c.handleRequest(m)
	case m.Method != "":
		c.handleNotification(m)
	case present["id"]:
		c.handleResponse(m)
	default:
		c.respond(json.RawMessage("null"), nil, &Error{Code: -32600, Message: "Invalid Request"})
	}
}

// parseMessage decodes a line and says which top-level keys it has.
func parseMessage(line []byte) (Message, map[string]bool, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(line, &fields); err != nil {
		return Message{}, nil, err
	}
	present := map[string]bool{}
	for k := range fields {
		present[k] = true
	}
	var m Message
	m.ID = fields["id"]
	m.Params = fields["params"]
	m.Result = fields["result"]
	if raw, ok := fields["method"]; ok {
		if err := json.Unmarshal(raw, &m.Method); err != nil {
			return Message{}, nil, fmt.Errorf("method: %w", err)
		}
	}
	if raw, ok := fields["error"]; ok && string(raw) != "null" {
		m.Error = new(Error)
		if err := json.Unmarshal(raw, m.Error); err != nil {
			return Message{}, nil, fmt.Errorf("error: %w", err)
		}
	}
	return m, present, nil
}

// idKey is the map key of a raw id.
func idKey(id json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Compact(&b, id); err != nil {
		return string(id)
	}
	return b.String()
}

func (c *conn) handleResponse(m Message) {
	key := idKey(m.ID)
	c.mu.Lock()
	ch, ok := c.pending[key]
	delete(c.pending, key)
	c.mu.Unlock()
	if !ok {
		c.logf("response to unknown id %s", key)
		return
	}
	ch <- m // buffered
}

func (c *conn) handleNotification(m Message) {
	switch m.Method {
	case "session/cancel":
		var p struct {
			SessionID string `json:"sessionId"`
		}
		json.Unmarshal(m.Params, &p)
		c.mu.Lock()
		turn := c.turns[p.SessionID]
		c.mu.Unlock()
		if turn != nil {
			turn.cancel()
		}
	case "$/cancel_request":
		var p struct {
			RequestID json.RawMessage `json:"requestId"`
		}
		json.Unmarshal(m.Params, &p)
		c.mu.Lock()
		cl := c.calls[idKey(p.RequestID)]
		c.mu.Unlock()
		if cl != nil {
			cl.cancel()
		}
	}
}

// handleRequest does the bookkeeping that must happen in arrival order (ids
// handed out, turns registered), then answers on its own goroutine so the
// read loop keeps reading.
func (c *conn) handleRequest(m Message) {
	key := idKey(m.ID)
	cl := newCall()
	c.mu.Lock()
	c.calls[key] = cl
	c.mu.Unlock()
	var params struct {
		SessionID string `json:"sessionId"`
		Cwd       string `json:"cwd"`
		MethodID  string `json:"methodId"`
	}
	json.Unmarshal(m.Params, &params)

	if m.Method == "session/prompt" {
		c.startPrompt(m, cl, params.SessionID)
		return
	}
	answer := func(session string, steps []Step, reply func() (any, *Error)) {
		c.handlers.Add(1)
		go func() {
			defer c.handlers.Done()
			defer c.forget(key, cl)
			err := c.run(runner{session: session, call: cl}, steps)
			switch {
			case errors.Is(err, errClosed):
				return
			case errors.Is(err, errCancelled):
				c.respond(m.ID, nil, &Error{Code: -32800, Message: "Request cancelled"})
				return
			}
			result, rpcErr := reply()
			if m.Method == "authenticate" && rpcErr == nil {
				c.mu.Lock()
				c.authed[params.MethodID] = true
				c.mu.Unlock()
			}
			c.respond(m.ID, result, rpcErr)
		}()
	}
	fixed := func(result any, rpcErr *Error) func() (any, *Error) {
		return func() (any, *Error) { return result, rpcErr }
	}

	if canned, ok := c.script.Methods[m.Method]; ok {
		var result any
		if len(canned.Result) > 0 {
			result = canned.Result
		}
		answer(params.SessionID, canned.Steps, fixed(result, canned.Error))
		return
	}
	s := c.script
	switch m.Method {
	case "initialize":
		answer("", s.Initialize.Steps, fixed(c.initializeResult(), s.Initialize.Error))
	case "authenticate", "logout", "session/set_mode", "session/set_model":
		answer(params.SessionID, nil, fixed(nil, nil))
	case "session/new":
		if rpcErr := c.authError(); rpcErr != nil {
			answer("", nil, fixed(nil, rpcErr))
			return
		}
		id := c.newSessionID(params.Cwd)
		ns := s.NewSession
		answer(id, ns.Steps, fixed(sessionResult{
			SessionID: id, Modes: ns.Modes, ConfigOptions: ns.ConfigOptions, Models: ns.Models, Meta: ns.Meta,
		}, nil))
	case "session/load":
		ls := s.LoadSession
		if !c.knownSession(params.SessionID) {
			rpcErr := ls.UnknownError
			if rpcErr == nil {
				rpcErr = &Error{Code: -32002, Message: "Resource not found", Data: mustJSON(map[string]string{"sessionId": params.SessionID})}
			}
			answer("", nil, fixed(nil, rpcErr))
			return
		}
		c.addSession(params.SessionID, params.Cwd)
		var result any = sessionResult{Modes: ls.Modes, ConfigOptions: ls.ConfigOptions, Models: ls.Models}
		if ls.NullResult {
			result = json.RawMessage("null")
		}
		answer(params.SessionID, ls.Replay, fixed(result, nil))
	case "session/resume":
		c.addSession(params.SessionID, params.Cwd)
		answer(params.SessionID, nil, fixed(nil, nil))
	case "session/close", "session/delete":
		c.mu.Lock()
		if turn := c.turns[params.SessionID]; turn != nil {
			turn.cancel()
		}
		if m.Method == "session/delete" {
			delete(c.sessions, params.SessionID)
		}
		c.mu.Unlock()
		answer(params.SessionID, nil, fixed(nil, nil))
	case "session/list":
		answer("", nil, fixed(c.listSessions(), nil))
	case "session/set_config_option":
		answer(params.SessionID, nil, func() (any, *Error) { return c.setConfigOption(m.Params) })
	default:
		answer("", nil, fixed(nil, &Error{Code: -32601, Message: "Method not found", Data: mustJSON(map[string]string{"method": m.Method})}))
	}
}

// forget drops a finished client request.
func (c *conn) forget(key string, cl *call) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.calls[key] == cl {
		delete(c.calls, key)
	}
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

type initializeResult struct {
	ProtocolVersion   int             `json:"protocolVersion"`
	AgentCapabilities json.RawMessage `json:"agentCapabilities,omitempty"`
	AuthMethods       json.RawMessage `json:"authMethods"`
	AgentInfo         json.RawMessage `json:"agentInfo,omitempty"`
	Meta              json.RawMessage `json:"_meta,omitempty"`
}

func (c *conn) initializeResult() initializeResult {
	in := c.script.Initialize
	r := initializeResult{
		ProtocolVersion:   c.script.ProtocolVersion,
		AgentCapabilities: in.AgentCapabilities,
		AuthMethods:       in.AuthMethods,
		AgentInfo:         in.AgentInfo,
		Meta:              in.Meta,
	}
	if r.ProtocolVersion == 0 {
		r.ProtocolVersion = 1
	}
	if len(r.AgentCapabilities) == 0 {
		r.AgentCapabilities = DefaultAgentCapabilities
	}
	if len(r.AuthMethods) == 0 {
		r.AuthMethods = json.RawMessage("[]")
	}
	if len(r.AgentInfo) == 0 {
		r.AgentInfo = DefaultAgentInfo
	}
	return r
}

type sessionResult struct {
	SessionID     string          `json:"sessionId,omitempty"`
	Modes         json.RawMessage `json:"modes,omitempty"`
	ConfigOptions json.RawMessage `json:"configOptions,omitempty"`
	Models        json.RawMessage `json:"models,omitempty"`
	Meta          json.RawMessage `json:"_meta,omitempty"`
}

func (c *conn) authError() *Error {
	ns := c.script.NewSession
	if ns.RequireAuth == "" {
		return nil
	}
	c.mu.Lock()
	ok := c.authed[ns.RequireAuth] || (ns.RequireAuth == "*" && len(c.authed) > 0)
	c.mu.Unlock()
	if ok {
		return nil
	}
	if ns.AuthError != nil {
		return ns.AuthError
	}
	return &Error{Code: -32000, Message: "Authentication required"}
}

func (c *conn) newSessionID(cwd string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	ids := c.script.NewSession.SessionIDs
	var id string
	if c.created < len(ids) {
		id = ids[c.created]
	} else {
		id = "sess_" + strconv.Itoa(c.created+1)
	}
	c.created++
	c.sessions[id] = cwd
	return id
}

func (c *conn) knownSession(id string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.sessions[id]; ok {
		return true
	}
	for _, known := range c.script.LoadSession.Sessions {
		if known == id {
			return true
		}
	}
	return false
}

func (c *conn) addSession(id, cwd string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sessions[id] = cwd
}

type sessionInfo struct {
	SessionID string `json:"sessionId"`
	Cwd       string `json:"cwd"`
}

func (c *conn) listSessions() any {
	c.mu.Lock()
	defer c.mu.Unlock()
	list := []sessionInfo{}
	for id, cwd := range c.sessions {
		list = append(list, sessionInfo{SessionID: id, Cwd: cwd})
	}
	for _, id := range c.script.LoadSession.Sessions {
		if _, ok := c.sessions[id]; !ok {
			list = append(list, sessionInfo{SessionID: id, Cwd: "/"})
		}
	}
	slices.SortFunc(list, func(a, b sessionInfo) int { return strings.Compare(a.SessionID, b.SessionID) })
	return map[string]any{"sessions": list}
}

// setConfigOption updates the current value of one option and returns the
// complete list, as ACP requires.
func (c *conn) setConfigOption(raw json.RawMessage) (any, *Error) {
	var p struct {
		ConfigID string `json:"configId"`
		Value    any    `json:"value"`
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, &Error{Code: -32602, Message: "Invalid params"}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.options == nil {
		c.options = []map[string]any{}
		if len(c.script.NewSession.ConfigOptions) > 0 {
			if err := json.Unmarshal(c.script.NewSession.ConfigOptions, &c.options); err != nil {
				return nil, &Error{Code: -32603, Message: "script configOptions: " + err.Error()}
			}
		}
	}
	for _, opt := range c.options {
		if opt["id"] == p.ConfigID {
			opt["currentValue"] = p.Value
			return map[string]any{"configOptions": c.options}, nil
		}
	}
	return nil, &Error{Code: -32602, Message: "Invalid params: unknown config option " + strconv.Quote(p.ConfigID)}
}

// startPrompt registers the turn (so a session/cancel read next finds it)
// and runs it on its own goroutine.
func (c *conn) startPrompt(m Message, cl *call, sessionID string) {
	var p struct {
		Prompt []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"prompt"`
	}
	json.Unmarshal(m.Params, &p)
	var texts []string
	for _, block := range p.Prompt {
		if block.Type == "text" {
			texts = append(texts, block.Text)
		}
	}
	turn := pickTurn(c.script.Prompts, strings.Join(texts, "\n"))
	cl.ignoreCancel = turn.IgnoreCancel
	c.mu.Lock()
	c.turns[sessionID] = cl
	c.mu.Unlock()

	c.handlers.Add(1)
	go func() {
		defer c.handlers.Done()
		key := idKey(m.ID)
		defer c.forget(key, cl)
		err := c.run(runner{session: sessionID, call: cl}, turn.Steps)
		if errors.Is(err, errClosed) {
			return
		}
		c.mu.Lock()
		if c.turns[sessionID] == cl {
			delete(c.turns, sessionID)
		}
		c.mu.Unlock()
		result := promptResult{StopReason: turn.StopReason, Usage: turn.Usage, Meta: turn.Meta}
		if result.StopReason == "" {
			result.StopReason = "end_turn"
		}
		var rpcErr *Error
		switch {
		case errors.Is(err, errCancelled):
			result.StopReason = "cancelled"
		case turn.Error != nil:
			rpcErr = turn.Error
		}
		if c.respond(m.ID, result, rpcErr) != nil {
			return
		}
		if err := c.run(runner{session: sessionID}, turn.After); err != nil && !errors.Is(err, errClosed) {
			c.logf("after steps: %v", err)
		}
	}()
}

type promptResult struct {
	StopReason string          `json:"stopReason"`
	Usage      json.RawMessage `json:"usage,omitempty"`
	Meta       json.RawMessage `json:"_meta,omitempty"`
}

func pickTurn(turns []Turn, text string) Turn {
	for _, t := range turns {
		if t.Match != "" && strings.Contains(text, t.Match) {
			return t
		}
	}
	for _, t := range turns {
		if t.Match == "" {
			return t
		}
	}
	return Turn{}
}
