package acpclient

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/acphost/acphost/internal/schematest"
	"go.uber.org/goleak"
)

// schema validates every line the client sends in these tests, when the
// official schema is present (schema_test.go fails loudly without it).
var schema = sync.OnceValue(func() *schematest.Validator {
	path, err := schematest.Find()
	if err != nil {
		return nil
	}
	v, err := schematest.New(path)
	if err != nil {
		panic(err)
	}
	return v
})

func TestMain(m *testing.M) {
	switch os.Getenv(helperHostEnv) {
	case "":
	case helperRunningHost:
		runHelperRunningHost()
		return
	case helperTTYHost:
		runHelperTTYHost()
		return
	case helperAgentDaemonHost:
		runHelperHost(agentDaemonScript, false)
		return
	case helperSentinelHost:
		runHelperHost(helperAgentScript, true)
		return
	default:
		runHelperHost(helperAgentScript, false)
		return
	}
	goleak.VerifyTestMain(m)
}

// peer is the agent side of an in-memory connection, driven line by line.
type peer struct {
	t       *testing.T
	conn    net.Conn
	r       *bufio.Reader
	tracker *schematest.Tracker
}

// wireMsg is a decoded line as the agent sees it.
type wireMsg struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   *Error          `json:"error"`
	line    []byte
}

// newPair returns a Conn over an in-memory pipe and the agent's end.
func newPair(t *testing.T, client Client, opts *ConnOptions) (*Conn, *peer) {
	t.Helper()
	ct, at := NewInMemoryTransports()
	c, err := Connect(context.Background(), ct, client, opts)
	if err != nil {
		t.Fatal(err)
	}
	p := &peer{t: t, conn: at.Stream.(net.Conn), r: bufio.NewReaderSize(at.Stream, 1<<20)}
	if v := schema(); v != nil {
		p.tracker = v.NewTracker()
	}
	t.Cleanup(func() {
		p.conn.Close()
		c.Close()
		<-c.Done()
	})
	return c, p
}

// send writes raw lines to the client.
func (p *peer) send(lines ...string) {
	p.t.Helper()
	for _, l := range lines {
		if p.tracker != nil {
			_ = p.tracker.AgentLine([]byte(l)) // junk is sent on purpose; only ids matter here
		}
		if _, err := p.conn.Write([]byte(l + "\n")); err != nil {
			p.t.Fatalf("agent write: %v", err)
		}
	}
}

// sendf writes one formatted line.
func (p *peer) sendf(format string, args ...any) { p.send(fmt.Sprintf(format, args...)) }

// recv reads the next message the client sent.
func (p *peer) recv() wireMsg {
	p.t.Helper()
	p.conn.SetReadDeadline(time.Now().Add(30 * time.Second)) // a bound for loaded CI machines, not a timing
	line, err := p.r.ReadBytes('\n')
	if err != nil {
		p.t.Fatalf("agent read: %v", err)
	}
	var m wireMsg
	if err := json.Unmarshal(line, &m); err != nil {
		p.t.Fatalf("client sent invalid JSON %q: %v", line, err)
	}
	m.line = line
	if p.tracker != nil {
		if err := p.tracker.ClientLine(line); err != nil {
			p.t.Errorf("client sent a message the ACP schema rejects: %v\n%s", err, line)
		}
	}
	return m
}

// handshake answers initialize with the given capabilities JSON.
func (p *peer) handshake(c *Conn, caps string) {
	p.t.Helper()
	errc := make(chan error, 1)
	go func() {
		_, err := c.Initialize(context.Background(), &InitializeRequest{ClientInfo: &Implementation{Name: "test", Version: "1"}})
		errc <- err
	}()
	m := p.recv()
	if m.Method != "initialize" {
		p.t.Fatalf("first message %q, want initialize", m.Method)
	}
	p.sendf(`{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":1,"agentCapabilities":%s,"authMethods":[]}}`, m.ID, caps)
	if err := <-errc; err != nil {
		p.t.Fatalf("Initialize: %v", err)
	}
}

// recorder is a Client that records what it is given.
type recorder struct {
	mu      sync.Mutex
	updates []*SessionNotification
	perms   chan permissionCall
	notify  chan struct{}
	block   chan struct{} // when non-nil, SessionUpdate waits on it
}

type permissionCall struct {
	ctx   context.Context
	req   *RequestPermissionRequest
	reply func(*RequestPermissionResponse, error)
}

func newRecorder() *recorder {
	return &recorder{perms: make(chan permissionCall, 16), notify: make(chan struct{}, 1)}
}

func (r *recorder) SessionUpdate(ctx context.Context, n *SessionNotification) {
	if r.block != nil {
		<-r.block
	}
	r.mu.Lock()
	r.updates = append(r.updates, n)
	r.mu.Unlock()
	select {
	case r.notify <- struct{}{}:
	default:
	}
}

func (r *recorder) RequestPermission(ctx context.Context, req *RequestPermissionRequest, reply func(*RequestPermissionResponse, error)) {
	r.perms <- permissionCall{ctx, req, reply}
}

func (r *recorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.updates)
}

func (r *recorder) snapshot() []*SessionNotification {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*SessionNotification(nil), r.updates...)
}

// waitUpdates waits until n updates were recorded.
func (r *recorder) waitUpdates(t *testing.T, n int) []*SessionNotification {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for r.count() < n {
		select {
		case <-r.notify:
		case <-deadline:
			t.Fatalf("got %d updates, want %d", r.count(), n)
		}
	}
	return r.snapshot()
}

func chunkLineJSON(session, text string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":%q,"update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":%q}}}}`, session, text)
}

func textOf(t *testing.T, n *SessionNotification) string {
	t.Helper()
	switch u := n.Update.(type) {
	case *AgentMessageChunk:
		return u.Content.Text
	case *AgentThoughtChunk:
		return u.Content.Text
	case *UserMessageChunk:
		return u.Content.Text
	}
	t.Fatalf("update %T is not a chunk", n.Update)
	return ""
}
