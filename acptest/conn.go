package acptest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
)

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
	injected int                     // texts steered in by session/inject, for their ids
	exitCode *int
}

// call is a client request being handled; cancelled closes on
// session/cancel (prompts) or $/cancel_request.
type call struct {
	cancelled    chan struct{}
	once         sync.Once
	ignoreCancel bool
	steered      chan string // texts steered into a prompt turn (steering.go)
}

func newCall() *call { return &call{cancelled: make(chan struct{}), steered: make(chan string, 16)} }

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
