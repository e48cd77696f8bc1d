package acptest_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/acphost/acphost/acptest"
	"github.com/acphost/acphost/internal/schematest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// client is a bare ACP client for the tests: it writes raw JSON lines and
// checks every line crossing the connection against the schema.
type client struct {
	t       testing.TB
	w       io.Writer
	agent   *acptest.Agent
	tracker *schematest.Tracker // nil when the schema is not available
	lines   chan []byte
	done    chan struct{}
	nextID  int
	// skipped holds messages read while looking for something else; until
	// returns them first.
	skipped []msg
}

// msg is one message the agent wrote.
type msg struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *acptest.Error  `json:"error"`
	line   []byte
}

// start runs script in process through a Transport and connects a client
// to it; the test's cleanup closes the connection, which stops the agent.
func start(t testing.TB, script acptest.Script) *client {
	t.Helper()
	tr := &acptest.Transport{Script: script}
	conn, err := tr.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return newClient(t, conn, conn, tr.Agents()[0])
}

// startAgent connects a client to a prepared agent served on an io.Pipe
// pair, with Serve called directly.
func startAgent(t testing.TB, agent *acptest.Agent) *client {
	t.Helper()
	conn := pipe(t, agent)
	return newClient(t, conn, conn, agent)
}

// pipe serves a on a new in-memory connection and returns the client's end.
// Closing that end is the agent's end of input; the test's cleanup closes it
// and waits for the agent to stop.
func pipe(t testing.TB, a *acptest.Agent) io.ReadWriteCloser {
	t.Helper()
	toAgent, fromClient := io.Pipe()
	toClient, fromAgent := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		err := a.Serve(ctx, toAgent, fromAgent)
		// The agent is gone: the client reads the end of its output.
		fromAgent.Close()
		toAgent.Close()
		done <- err
	}()
	client := &pipeEnd{r: toClient, w: fromClient}
	t.Cleanup(func() {
		client.Close()
		cancel()
		select {
		case err := <-done:
			var exit *acptest.ExitError
			if err != nil && !errors.As(err, &exit) && !errors.Is(err, context.Canceled) && !errors.Is(err, io.ErrClosedPipe) {
				t.Logf("acptest: fake agent stopped: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Errorf("acptest: fake agent did not stop within 10s of cleanup")
		}
	})
	return client
}

// pipeEnd is the client's end of an io.Pipe connection.
type pipeEnd struct {
	r *io.PipeReader
	w *io.PipeWriter
}

func (p *pipeEnd) Read(b []byte) (int, error)  { return p.r.Read(b) }
func (p *pipeEnd) Write(b []byte) (int, error) { return p.w.Write(b) }

// Close ends the agent's input and stops reading its output.
func (p *pipeEnd) Close() error {
	p.w.Close()
	p.r.Close()
	return nil
}

func newClient(t testing.TB, r io.Reader, w io.Writer, agent *acptest.Agent) *client {
	c := &client{t: t, w: w, agent: agent, lines: make(chan []byte, 64), done: make(chan struct{})}
	if _, err := schematest.Find(); err == nil {
		c.tracker = schematest.Load(t).NewTracker()
	} else {
		t.Logf("schema checks off: %v", err)
	}
	go func() {
		defer close(c.lines)
		br := bufio.NewReaderSize(r, 1<<20)
		for {
			line, err := br.ReadBytes('\n')
			if len(line) > 0 {
				select {
				case c.lines <- line:
				case <-c.done:
					return
				}
			}
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() { close(c.done) })
	return c
}

// send writes one line the client sends; it must be schema-valid.
func (c *client) send(line string) {
	c.t.Helper()
	if c.tracker != nil {
		if err := c.tracker.ClientLine([]byte(line)); err != nil {
			c.t.Errorf("test client sent an invalid message: %v\n%s", err, line)
		}
	}
	if _, err := io.WriteString(c.w, line+"\n"); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

// call sends a request and returns its id.
func (c *client) call(method, params string) json.RawMessage {
	c.t.Helper()
	c.nextID++
	id := fmt.Sprint(c.nextID)
	c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":%q,"params":%s}`, id, method, params))
	return json.RawMessage(id)
}

func (c *client) notify(method, params string) {
	c.t.Helper()
	c.send(fmt.Sprintf(`{"jsonrpc":"2.0","method":%q,"params":%s}`, method, params))
}

// reply answers one of the agent's requests.
func (c *client) reply(id json.RawMessage, result string) {
	c.t.Helper()
	c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s}`, id, result))
}

func (c *client) replyError(id json.RawMessage, code int, message string) {
	c.t.Helper()
	c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":%q}}`, id, code, message))
}

// rawLine returns the next line the agent wrote, unchecked.
func (c *client) rawLine() []byte {
	c.t.Helper()
	select {
	case line, ok := <-c.lines:
		if !ok {
			c.t.Fatalf("agent closed the connection")
		}
		return line
	case <-time.After(10 * time.Second):
		c.t.Fatalf("no line from the agent within 10s")
	}
	return nil
}

// next returns the next message, which must be one compact schema-valid
// line.
func (c *client) next() msg {
	c.t.Helper()
	line := c.rawLine()
	if strings.Count(string(line), "\n") != 1 || !strings.HasSuffix(string(line), "\n") {
		c.t.Fatalf("not one line: %q", line)
	}
	if c.tracker != nil {
		if err := c.tracker.AgentLine(line); err != nil {
			c.t.Errorf("agent wrote an invalid message: %v\n%s", err, line)
		}
	}
	var m msg
	if err := json.Unmarshal(line, &m); err != nil {
		c.t.Fatalf("agent wrote non-JSON %q: %v", line, err)
	}
	if !strings.Contains(string(line), `"jsonrpc":"2.0"`) {
		c.t.Errorf(`no "jsonrpc":"2.0" in %s`, line)
	}
	m.line = line
	return m
}

// until reads messages up to and including the response to id and returns
// the messages before it and the response.
func (c *client) until(id json.RawMessage) ([]msg, msg) {
	c.t.Helper()
	before := c.skipped
	c.skipped = nil
	for {
		m := c.next()
		if m.Method == "" && string(m.ID) == string(id) {
			return before, m
		}
		before = append(before, m)
	}
}

// result waits for the response to id and decodes its result into v.
func (c *client) result(id json.RawMessage, v any) []msg {
	c.t.Helper()
	before, resp := c.until(id)
	if resp.Error != nil {
		c.t.Fatalf("response %s: error %d %s", id, resp.Error.Code, resp.Error.Message)
	}
	if v != nil {
		if err := json.Unmarshal(resp.Result, v); err != nil {
			c.t.Fatalf("result %s: %v", resp.Result, err)
		}
	}
	return before
}

// initialize runs the handshake and one session/new, returning the session.
func (c *client) initialize() {
	c.t.Helper()
	c.result(c.call("initialize", `{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":true,"writeTextFile":true},"terminal":true},"clientInfo":{"name":"acptest-client","version":"1.0.0"}}`), nil)
}

func (c *client) newSession() string {
	c.t.Helper()
	var r struct {
		SessionID string `json:"sessionId"`
	}
	c.result(c.call("session/new", `{"cwd":"/tmp","mcpServers":[]}`), &r)
	return r.SessionID
}

func (c *client) prompt(session, text string) json.RawMessage {
	c.t.Helper()
	return c.call("session/prompt", fmt.Sprintf(`{"sessionId":%q,"prompt":[{"type":"text","text":%q}]}`, session, text))
}

// stopReason waits for the prompt's answer and returns the stop reason and
// the texts of the agent_message_chunks before it.
func (c *client) stopReason(id json.RawMessage) (string, []string) {
	c.t.Helper()
	var r struct {
		StopReason string `json:"stopReason"`
	}
	before := c.result(id, &r)
	return r.StopReason, texts(before)
}

// texts returns the texts of the agent_message_chunk updates in msgs.
func texts(msgs []msg) []string {
	var out []string
	for _, m := range msgs {
		if t, ok := chunkText(m); ok {
			out = append(out, t)
		}
	}
	return out
}

func chunkText(m msg) (string, bool) {
	if m.Method != "session/update" {
		return "", false
	}
	var p struct {
		Update struct {
			SessionUpdate string `json:"sessionUpdate"`
			Content       struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"update"`
	}
	json.Unmarshal(m.Params, &p)
	if p.Update.SessionUpdate != "agent_message_chunk" {
		return "", false
	}
	return p.Update.Content.Text, true
}

// sessionOf returns the sessionId of a session/update.
func sessionOf(m msg) string {
	var p struct {
		SessionID string `json:"sessionId"`
	}
	json.Unmarshal(m.Params, &p)
	return p.SessionID
}

// expectSilence checks that the agent writes nothing for a short while.
func (c *client) expectSilence(d time.Duration) {
	c.t.Helper()
	select {
	case line, ok := <-c.lines:
		if ok {
			c.t.Fatalf("unexpected line from the agent: %s", line)
		}
	case <-time.After(d):
	}
}

func raw(s string) json.RawMessage { return json.RawMessage(s) }
