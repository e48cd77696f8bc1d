package acpclient

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"runtime/debug"
	"strings"
	"sync"
	"testing"
	"time"
)

// A box given back after a run is filled afresh by the next chunk of its
// kind: nothing of the chunk before shows through (message id, metas, the
// kept bytes), and the earlier chunk's strings are untouched.
func TestChunkBoxesRefilledClean(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1)) // a collection empties the pools
	first := []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"first","_meta":{"a":1}},"messageId":"m1","_meta":{"b":2}},"_meta":{"c":3}}}`)
	second := []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s2","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"second"}}}}`)
	var d chunkDecoder
	in1 := d.decode(bytes.Clone(first), false)
	text1 := in1.update.Update.(*AgentMessageChunk).Content.Text
	d.boxes.putRun([]*inbound{in1})
	in2 := d.decode(bytes.Clone(second), false)
	if !raceEnabled && in2 != in1 { // the race detector's pools drop some items
		t.Fatalf("the given-back box was not reused")
	}
	sameNotification(t, second, in2.update, generalDecode(second))
	if in2.box != boxMessage || in2.size != queuedSize(len(second), false) {
		t.Fatalf("refilled entry: box %d size %d", in2.box, in2.size)
	}
	if text1 != "first" {
		t.Fatalf("the first chunk's text became %q", text1)
	}
	// A box of another kind is not taken for it.
	thought := bytes.Replace(second, []byte("agent_message_chunk"), []byte("agent_thought_chunk"), 1)
	d.boxes.putRun([]*inbound{in2})
	if in3 := d.decode(thought, false); in3 == in2 {
		t.Fatalf("a message box was refilled as a thought")
	}
}

// keepingClient is a SessionUpdateBatcher that keeps what the contract
// lets it keep: each chunk's text, and Clone of one chunk in ten.
type keepingClient struct {
	batchClient
	gate   chan struct{} // the first delivery waits for it
	once   sync.Once
	mu     sync.Mutex
	texts  []string
	clones []*SessionNotification
	seen   map[*SessionNotification]bool
}

func (c *keepingClient) SessionUpdate(ctx context.Context, n *SessionNotification) {
	c.SessionUpdates(ctx, []*SessionNotification{n})
}

func (c *keepingClient) SessionUpdates(ctx context.Context, ns []*SessionNotification) {
	c.once.Do(func() { <-c.gate })
	c.mu.Lock()
	for _, n := range ns {
		c.seen[n] = true
		if len(c.texts)%10 == 0 {
			c.clones = append(c.clones, n.Clone())
		}
		c.texts = append(c.texts, n.Update.(*AgentMessageChunk).Content.Text)
	}
	c.mu.Unlock()
	c.batchClient.SessionUpdates(ctx, ns)
}

// A flood delivered in runs gives its chunks' boxes back, and the next
// chunks are decoded into them, while the texts and the clones a client
// kept stay what the agent sent.
func TestSessionUpdatesReuseChunkBoxes(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1)) // a collection empties the pools
	const half = 1500
	var phase [2]strings.Builder
	var want []string
	for i := range 2 * half {
		text := fmt.Sprint("t", i)
		if i == 2*half-1 {
			text = "last"
		}
		fmt.Fprintf(&phase[i/half], `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":%q},"messageId":"m%d"}}}`+"\n", text, i)
		want = append(want, text)
	}
	client := &keepingClient{batchClient: batchClient{done: make(chan struct{})}, gate: make(chan struct{}),
		seen: map[*SessionNotification]bool{}}
	pr, pw := io.Pipe()
	c := NewConn(pipeStream{Reader: pr, Writer: io.Discard, closer: pr}, client, nil)
	go pw.Write([]byte(phase[0].String()))
	// Hold the first delivery until the first half is queued, so it is
	// delivered in full runs whatever the machine's speed.
	waitUntil(t, func() bool {
		c.queue.mu.Lock()
		defer c.queue.mu.Unlock()
		return c.queue.enqueued >= half
	})
	close(client.gate)
	waitUntil(t, func() bool {
		client.mu.Lock()
		defer client.mu.Unlock()
		return len(client.texts) == half
	})
	client.mu.Lock()
	first := client.seen
	client.seen = map[*SessionNotification]bool{}
	client.mu.Unlock()
	go pw.Write([]byte(phase[1].String()))
	<-client.done
	pw.Close()
	<-c.Done()
	client.mu.Lock()
	defer client.mu.Unlock()
	if got := strings.Join(client.texts, " "); got != strings.Join(want, " ") {
		t.Fatalf("kept texts differ from what was sent")
	}
	for k, n := range client.clones {
		i := k * 10
		u := n.Update.(*AgentMessageChunk)
		if u.Content.Text != want[i] || u.MessageID == nil || *u.MessageID != fmt.Sprint("m", i) || n.SessionID != "s" {
			t.Fatalf("clone of chunk %d: text %q id %v session %q", i, u.Content.Text, u.MessageID, n.SessionID)
		}
		if raw := string(n.RawUpdate()); !strings.Contains(raw, fmt.Sprintf(`"messageId":"m%d"`, i)) {
			t.Fatalf("clone of chunk %d: RawUpdate %s", i, raw)
		}
	}
	fresh := 0 // boxes the second half needed beyond the first half's
	for n := range client.seen {
		if !first[n] {
			fresh++
		}
	}
	if !raceEnabled && fresh > half/4 {
		t.Fatalf("the second half's %d chunks took %d new boxes with %d given back (runs %v)", half, fresh, len(first), client.runs)
	}
}

// waitUntil polls cond every millisecond, failing t after 20 s.
func waitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
		time.Sleep(time.Millisecond)
	}
}
