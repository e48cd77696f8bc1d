package acptest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync"
)

// The Streamable HTTP profile's headers.
const (
	headerConnection = "Acp-Connection-Id"
	headerSession    = "Acp-Session-Id"
)

// maxPostBytes caps one POSTed message.
const maxPostBytes = 16 << 20

// httpConn is one Streamable HTTP connection: an agent, the pipe its
// input comes in by (one POST, one line), and the streams its output is
// routed to, as the TypeScript SDK's server routes it.
type httpConn struct {
	id    string
	agent *Agent
	in    *io.PipeWriter
	inMu  sync.Mutex
	stop  context.CancelFunc
	done  chan struct{} // the agent has returned and its streams are finished
	first chan []byte   // the agent's first line: the initialize answer

	mu       sync.Mutex
	out      []byte // a line the agent is still writing
	started  bool   // the first line went to first
	conn     *mailbox
	sessions map[string]*mailbox
	routes   map[string]string // the client's request ids -> the session answered on ("" the connection)
	asked    map[string]string // the agent's request ids -> their session
	ended    bool
}

// mailbox queues the messages of one stream until its one reader takes
// them.
type mailbox struct {
	mu       sync.Mutex
	queue    [][]byte
	wake     chan struct{}
	held     bool
	finished bool
}

func newMailbox() *mailbox { return &mailbox{wake: make(chan struct{}, 1)} }

func (m *mailbox) push(line []byte) {
	m.mu.Lock()
	if !m.finished {
		m.queue = append(m.queue, line)
	}
	m.mu.Unlock()
	m.poke()
}

func (m *mailbox) finish() {
	m.mu.Lock()
	m.finished = true
	m.mu.Unlock()
	m.poke()
}

func (m *mailbox) poke() {
	select {
	case m.wake <- struct{}{}:
	default:
	}
}

// serveStreamable serves the Streamable HTTP profile: POST, GET and
// DELETE on the one endpoint.
func (t *Transport) serveStreamable(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodPost:
		t.post(w, r)
	case http.MethodGet:
		t.get(w, r)
	case http.MethodDelete:
		c := t.takeHTTPConn(r.Header.Get(headerConnection))
		if c == nil {
			http.Error(w, "unknown "+headerConnection, http.StatusNotFound)
			return
		}
		c.end()
		w.WriteHeader(http.StatusAccepted)
	default:
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	}
}

func (t *Transport) httpConn(id string) *httpConn {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.httpConns[id]
}

func (t *Transport) takeHTTPConn(id string) *httpConn {
	t.mu.Lock()
	defer t.mu.Unlock()
	c := t.httpConns[id]
	delete(t.httpConns, id)
	return c
}

func (t *Transport) post(w http.ResponseWriter, r *http.Request) {
	if ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); ct != "application/json" {
		http.Error(w, "unsupported media type", http.StatusUnsupportedMediaType)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxPostBytes))
	if err != nil {
		http.Error(w, "reading the body: "+err.Error(), http.StatusRequestEntityTooLarge)
		return
	}
	body = bytes.Join(bytes.Fields(body), []byte{' '}) // one line
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			SessionID string `json:"sessionId"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &msg) != nil {
		http.Error(w, "invalid JSON-RPC message", http.StatusBadRequest)
		return
	}
	id := r.Header.Get(headerConnection)
	if msg.Method == "initialize" && id == "" {
		t.initialize(w, r, body)
		return
	}
	c := t.httpConn(id)
	if c == nil {
		http.Error(w, "unknown "+headerConnection, http.StatusNotFound)
		return
	}
	session := r.Header.Get(headerSession)
	if msg.Params.SessionID != "" && session != msg.Params.SessionID {
		http.Error(w, "missing or mismatched "+headerSession, http.StatusBadRequest)
		return
	}
	if msg.Method == "" && msg.ID != nil {
		// An answer to the agent's request about a session is sent with
		// that session's header, as the SDK's server requires.
		c.mu.Lock()
		want, ok := c.asked[string(msg.ID)]
		delete(c.asked, string(msg.ID))
		c.mu.Unlock()
		if ok && want != session {
			http.Error(w, "missing or mismatched "+headerSession, http.StatusBadRequest)
			return
		}
	}
	if msg.Method != "" && msg.ID != nil {
		route := session
		if msg.Method == "session/load" {
			route = "" // answered on the connection's stream, as the SDK does
		}
		c.mu.Lock()
		c.routes[string(msg.ID)] = route
		c.mu.Unlock()
	}
	if err := c.write(body); err != nil {
		http.Error(w, "the agent has ended", http.StatusNotFound)
		return
	}
	w.WriteHeader(http.StatusAccepted)
}

// initialize starts a connection's agent and answers with the agent's
// answer to initialize.
func (t *Transport) initialize(w http.ResponseWriter, r *http.Request, body []byte) {
	var b [16]byte
	rand.Read(b[:])
	c := &httpConn{
		id:       hex.EncodeToString(b[:]),
		agent:    NewAgent(t.Script),
		done:     make(chan struct{}),
		first:    make(chan []byte, 1),
		conn:     newMailbox(),
		sessions: map[string]*mailbox{},
		routes:   map[string]string{},
		asked:    map[string]string{},
	}
	c.agent.Stderr = t.Stderr
	pr, pw := io.Pipe()
	c.in = pw
	ctx, stop := context.WithCancel(context.Background())
	c.stop = stop
	t.mu.Lock()
	t.agents = append(t.agents, c.agent)
	if t.httpConns == nil {
		t.httpConns = map[string]*httpConn{}
	}
	t.httpConns[c.id] = c
	t.mu.Unlock()
	go func() {
		defer close(c.done)
		_ = c.agent.Serve(ctx, pr, (*agentOut)(c))
		pr.Close()
		c.finish()
		t.takeHTTPConn(c.id)
	}()
	if err := c.write(body); err != nil {
		http.Error(w, "the agent ended", http.StatusInternalServerError)
		return
	}
	select {
	case line := <-c.first:
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set(headerConnection, c.id)
		w.Write(line)
	case <-c.done:
		http.Error(w, "the agent ended before answering initialize", http.StatusInternalServerError)
	case <-r.Context().Done():
		t.takeHTTPConn(c.id)
		c.end()
	}
}

// write passes one message to the agent.
func (c *httpConn) write(line []byte) error {
	c.inMu.Lock()
	defer c.inMu.Unlock()
	_, err := c.in.Write(append(line, '\n'))
	return err
}

// end stops the agent and waits for it.
func (c *httpConn) end() {
	c.in.Close()
	c.stop()
	<-c.done
}

// finish ends every stream of the connection: the agent is gone.
func (c *httpConn) finish() {
	c.mu.Lock()
	c.ended = true
	boxes := []*mailbox{c.conn}
	for _, m := range c.sessions {
		boxes = append(boxes, m)
	}
	c.mu.Unlock()
	for _, m := range boxes {
		m.finish()
	}
}

// agentOut is where the agent writes: each line is routed to a stream.
type agentOut httpConn

func (o *agentOut) Write(p []byte) (int, error) {
	c := (*httpConn)(o)
	c.mu.Lock()
	c.out = append(c.out, p...)
	var lines [][]byte
	for {
		i := bytes.IndexByte(c.out, '\n')
		if i < 0 {
			break
		}
		lines = append(lines, bytes.Clone(c.out[:i]))
		c.out = c.out[i+1:]
	}
	c.mu.Unlock()
	for _, line := range lines {
		if len(bytes.TrimSpace(line)) > 0 {
			c.route(line)
		}
	}
	return len(p), nil
}

// route queues a line of the agent's on its stream: the first (the
// initialize answer) goes to the initialize POST; an answer goes where
// its request's session is; a request or notification naming a session
// goes to that session's stream, anything else to the connection's.
func (c *httpConn) route(line []byte) {
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			SessionID string `json:"sessionId"`
		} `json:"params"`
	}
	json.Unmarshal(line, &msg)
	c.mu.Lock()
	if !c.started {
		c.started = true
		c.mu.Unlock()
		c.first <- line
		return
	}
	session := msg.Params.SessionID
	if msg.Method != "" && msg.ID != nil {
		c.asked[string(msg.ID)] = session
	}
	if msg.Method == "" && msg.ID != nil {
		session = c.routes[string(msg.ID)]
		delete(c.routes, string(msg.ID))
	}
	m := c.conn
	if session != "" {
		m = c.session(session)
	}
	c.mu.Unlock()
	m.push(line)
}

// session returns a session's mailbox, made on first use; c.mu is held.
func (c *httpConn) session(id string) *mailbox {
	m := c.sessions[id]
	if m == nil {
		m = newMailbox()
		if c.ended {
			m.finished = true
		}
		c.sessions[id] = m
	}
	return m
}

// get serves one stream: the connection's, or a session's. A stream has
// one reader at a time (another is refused, 409). The connection ends
// when the reader of its stream goes away.
func (t *Transport) get(w http.ResponseWriter, r *http.Request) {
	if !strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
		http.Error(w, "not acceptable", http.StatusNotAcceptable)
		return
	}
	c := t.httpConn(r.Header.Get(headerConnection))
	if c == nil {
		http.Error(w, "unknown "+headerConnection, http.StatusNotFound)
		return
	}
	session := r.Header.Get(headerSession)
	c.mu.Lock()
	m := c.conn
	if session != "" {
		m = c.session(session)
	}
	c.mu.Unlock()
	m.mu.Lock()
	if m.held {
		m.mu.Unlock()
		http.Error(w, "the stream already has a reader", http.StatusConflict)
		return
	}
	m.held = true
	m.mu.Unlock()
	defer func() {
		m.mu.Lock()
		m.held = false
		m.mu.Unlock()
	}()

	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	if flusher != nil {
		flusher.Flush()
	}
	for {
		m.mu.Lock()
		queue, finished := m.queue, m.finished
		m.queue = nil
		m.mu.Unlock()
		for _, line := range queue {
			if _, err := io.WriteString(w, "data: "); err != nil {
				return
			}
			w.Write(line)
			io.WriteString(w, "\n\n")
		}
		if flusher != nil && len(queue) > 0 {
			flusher.Flush()
		}
		if finished && len(queue) == 0 {
			return
		}
		select {
		case <-m.wake:
		case <-r.Context().Done():
			if session == "" {
				if c := t.takeHTTPConn(c.id); c != nil {
					c.end()
				}
			}
			return
		}
	}
}
