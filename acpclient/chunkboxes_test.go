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

	"github.com/acphost/acphost/internal/waitfor"

	"github.com/acphost/acphost/internal/wire"
)

// A box given back after a run is filled afresh by the next chunk: nothing
// of the chunk before shows through (message id, metas, the kept bytes),
// the earlier chunk's strings are untouched, and a box that held one kind
// of chunk serves another as that kind.
func TestChunkBoxesRefilledClean(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1)) // a collection empties the pools
	first := []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"first","_meta":{"a":1}},"messageId":"m1","_meta":{"b":2}},"_meta":{"c":3}}}`)
	second := []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s2","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"second"}}}}`)
	var d chunkDecoder
	in1 := d.decode(bytes.Clone(first), false)
	text1 := in1.update.Update.(*AgentMessageChunk).Content.Text
	d.giveBack([]*inbound{in1})
	in2 := d.decode(bytes.Clone(second), false)
	if !raceEnabled && in2 != in1 { // the race detector's pools drop some items
		t.Fatalf("the given-back box was not reused")
	}
	sameNotification(t, second, in2.update, generalDecode(second))
	if in2.boxed != inChunkBox || in2.size != queuedSize(len(second), false) {
		t.Fatalf("refilled entry: boxed %v size %d", in2.boxed, in2.size)
	}
	if text1 != "first" {
		t.Fatalf("the first chunk's text became %q", text1)
	}
	for _, kind := range []string{"agent_thought_chunk", "user_message_chunk"} {
		line := bytes.Replace(first, []byte("agent_message_chunk"), []byte(kind), 1)
		d.giveBack([]*inbound{in2})
		in3 := d.decode(line, false)
		if !raceEnabled && in3 != in2 {
			t.Fatalf("the given-back box was not reused for a %s", kind)
		}
		sameNotification(t, line, in3.update, generalDecode(line))
		in2 = in3
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
			c.clones = append(c.clones, cloneNote(n))
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
	waitfor.Closed(t, client.done, "the client to be done")
	pw.Close()
	waitfor.Closed(t, c.Done(), "the connection to end")
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
		if raw := string(rawUpdate(n)); !strings.Contains(raw, fmt.Sprintf(`"messageId":"m%d"`, i)) {
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

// Before the read goroutine waits on a quiet agent, it puts the boxes it
// took and did not use back where a collection reaches them: a connection
// that streamed and went idle keeps none of its own. So it does with the
// entries of text deltas, for a client that takes those.
func TestBoxesReleasedBeforeWaiting(t *testing.T) {
	t.Run("chunk boxes", func(t *testing.T) {
		client := &orderClient{}
		wait := func(t *testing.T, n int) { client.waitLog(t, n) }
		checkReleasedBeforeWaiting(t, client, wait, func(c *Conn) int { return len(c.chunks.boxes.taken) })
	})
	t.Run("delta entries", func(t *testing.T) {
		client := newDeltaClient()
		wait := func(t *testing.T, n int) { client.wait(t, n) }
		checkReleasedBeforeWaiting(t, client, wait, func(c *Conn) int { return len(c.chunks.deltas.taken) })
	})
}

// checkReleasedBeforeWaiting streams chunks to client, waits (wait) until
// they are delivered, and checks that held, read on the read goroutine
// while it waits on the agent, is zero.
func checkReleasedBeforeWaiting(t *testing.T, client Client, wait func(*testing.T, int), held func(*Conn) int) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1)) // a collection empties the pools
	var lines strings.Builder
	for i := range 300 {
		lines.WriteString(chunkLineJSON("s", fmt.Sprint("t", i)) + "\n")
	}
	holding := make(chan int, 1)
	var c *Conn
	pr, pw := io.Pipe()
	c = NewConn(pipeStream{Reader: pr, Writer: io.Discard, closer: pr}, client, &ConnOptions{
		OnBadLine: func(BadLine) { holding <- held(c) }, // on the read goroutine
	})
	defer func() {
		pw.Close()
		<-c.Done()
	}()
	pw.Write([]byte(lines.String()))
	wait(t, 300) // the boxes are given back
	pw.Write([]byte(chunkLineJSON("s", "one more") + "\n"))
	wait(t, 301)
	pw.Write([]byte("junk\n"))
	if n := waitfor.Recv(t, holding, "holding"); n != 0 {
		t.Fatalf("waiting for the agent, the read goroutine held %d boxes", n)
	}
}

// cloneNote is a copy of n to keep past a run, as the bridge keeps one.
func cloneNote(n *SessionNotification) *SessionNotification {
	c := *n
	if u, ok := n.Update.(*AgentMessageChunk); ok {
		v := *u
		if u.MessageID != nil {
			id := *u.MessageID
			v.MessageID = &id
		}
		c.Update = &v
	}
	testRaw.Store(&c, &rawSource{})
	return &c
}

func (c *keepingClient) Updates(ctx context.Context, run []wire.Update[*SessionNotification]) {
	splitRun(ctx, run, c.SessionUpdates, nil)
}
