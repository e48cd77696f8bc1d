package acpclient

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/acphost/acphost/internal/waitfor"

	"github.com/acphost/acphost/internal/wire"
)

// batchClient records what reaches it, and how: the text of each chunk and
// each extension notification in arrival order, and the size of each run.
type batchClient struct {
	mu   sync.Mutex
	log  []string
	runs []int
	done chan struct{}
}

func (c *batchClient) SessionUpdate(_ context.Context, n *SessionNotification) {
	c.SessionUpdates(context.Background(), []*SessionNotification{n})
}

func (c *batchClient) SessionUpdates(_ context.Context, ns []*SessionNotification) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.runs = append(c.runs, len(ns))
	for _, n := range ns {
		text := n.Update.(*AgentMessageChunk).Content.Text
		c.log = append(c.log, text)
		if text == "last" {
			close(c.done)
		}
	}
}

func (c *batchClient) RequestPermission(_ context.Context, _ *RequestPermissionRequest, reply func(*RequestPermissionResponse, error)) {
	reply(PermissionCancelled(), nil)
}

func (c *batchClient) HandleExtension(context.Context, string, json.RawMessage) (any, error) {
	return nil, nil
}

func (c *batchClient) HandleExtensionNotification(_ context.Context, method string, _ json.RawMessage) {
	c.mu.Lock()
	c.log = append(c.log, method)
	c.mu.Unlock()
}

// A Client with SessionUpdates gets chunks that were queued together in
// runs, in order, with nothing lost; a message of another kind ends a run
// and is delivered at its place.
func TestSessionUpdatesGetsRunsInOrder(t *testing.T) {
	const chunks = 600
	var in strings.Builder
	var want []string
	for i := range chunks {
		text := fmt.Sprint("t", i)
		if i == chunks-1 {
			text = "last"
		}
		fmt.Fprintf(&in, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":%q}}}}`+"\n", text)
		want = append(want, text)
		if i == chunks/2 {
			in.WriteString(`{"jsonrpc":"2.0","method":"_x/between","params":{}}` + "\n")
			want = append(want, "_x/between")
		}
	}
	client := &batchClient{done: make(chan struct{})}
	pr, pw := io.Pipe()
	c := NewConn(pipeStream{Reader: pr, Writer: io.Discard, closer: pr}, client, nil)
	go pw.Write([]byte(in.String())) // one write: lines arrive faster than one at a time
	waitfor.Closed(t, client.done, "the client to be done")
	pw.Close()
	waitfor.Closed(t, c.Done(), "the connection to end")
	client.mu.Lock()
	defer client.mu.Unlock()
	if got := strings.Join(client.log, " "); got != strings.Join(want, " ") {
		t.Fatalf("delivered\n%s\nwant\n%s", got, strings.Join(want, " "))
	}
	longest := 0
	for _, n := range client.runs {
		longest = max(longest, n)
		if n > maxUpdateRun {
			t.Fatalf("a run of %d notifications, more than %d", n, maxUpdateRun)
		}
	}
	if longest < 2 {
		t.Fatalf("runs %v: the queued chunks were delivered one call each", client.runs)
	}
}

func (c *batchClient) Updates(ctx context.Context, run []wire.Update[*SessionNotification]) {
	splitRun(ctx, run, c.SessionUpdates, nil)
}

// panicReceiver logs the updates of each run it takes as "session text"
// or "session kind", and panics at a piece of text it is told to.
type panicReceiver struct {
	batchClient
	at string
}

func (c *panicReceiver) Updates(_ context.Context, run []wire.Update[*SessionNotification]) {
	var entries []string
	for _, u := range run {
		n := u.Note
		if u.IsDelta {
			n = deltaNote(&u.Delta)
		}
		entry := n.SessionID + " " + n.Update.Kind()
		if c, ok := n.Update.(*AgentMessageChunk); ok {
			if c.Content.Text == "boom" {
				panic("client fault")
			}
			entry = n.SessionID + " " + c.Content.Text
		}
		entries = append(entries, entry)
	}
	c.mu.Lock()
	c.log = append(c.log, entries...)
	if len(c.log) >= 3 {
		close(c.done)
	}
	c.mu.Unlock()
}

// A panic in the receiver costs its related run alone, on the fast path
// and the plain one: another session's chunk and a tool call read in the
// same batch as the chunk that panicked still arrive, in order.
func TestReceiverPanicCostsItsRun(t *testing.T) {
	client := &panicReceiver{batchClient: batchClient{done: make(chan struct{})}}
	pr, pw := io.Pipe()
	c := NewConn(pipeStream{Reader: pr, Writer: io.Discard, closer: pr}, client, nil)
	lines := chunkLineJSON("s", "boom") + "\n" + chunkLineJSON("t", "other session") + "\n" +
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"t","title":"x"}}}` + "\n" +
		chunkLineJSON("s", "after") + "\n"
	go pw.Write([]byte(lines)) // one write: the lines share a queue run
	waitfor.Closed(t, client.done, "three deliveries")
	pw.Close()
	waitfor.Closed(t, c.Done(), "the connection to end")
	client.mu.Lock()
	defer client.mu.Unlock()
	if got, want := strings.Join(client.log, "|"), "t other session|s tool_call|s after"; got != want {
		t.Fatalf("deliveries %q, want %q", got, want)
	}
}
