package acpclient

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acphost/acphost/internal/waitfor"

	"github.com/acphost/acphost/internal/wire"
)

// orderClient logs, in delivery order, each chunk's text and "perm" for
// each permission request (answered at once), and delivers in runs, each
// taking slow at least.
type orderClient struct {
	slow time.Duration
	mu   sync.Mutex
	log  []string
}

func (c *orderClient) SessionUpdate(ctx context.Context, n *SessionNotification) {
	c.SessionUpdates(ctx, []*SessionNotification{n})
}

func (c *orderClient) SessionUpdates(_ context.Context, ns []*SessionNotification) {
	time.Sleep(c.slow)
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, n := range ns {
		c.log = append(c.log, n.Update.(*AgentMessageChunk).Content.Text)
	}
}

func (c *orderClient) RequestPermission(_ context.Context, _ *RequestPermissionRequest, reply func(*RequestPermissionResponse, error)) {
	c.mu.Lock()
	c.log = append(c.log, "perm")
	c.mu.Unlock()
	reply(PermissionCancelled(), nil)
}

func (c *orderClient) snapshot() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.log...)
}

// waitLog waits until c has logged n entries, failing after a deadline.
func (c *orderClient) waitLog(t *testing.T, n int) []string {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for len(c.snapshot()) < n {
		if time.Now().After(deadline) {
			t.Fatalf("delivered %q, want %d entries", c.snapshot(), n)
		}
		time.Sleep(time.Millisecond)
	}
	return c.snapshot()
}

// chunkLines returns n chunk lines with texts prefix0…, and those texts.
func chunkLines(prefix string, n int) (string, []string) {
	var lines strings.Builder
	var texts []string
	for i := range n {
		text := fmt.Sprint(prefix, i)
		lines.WriteString(chunkLineJSON("s", text) + "\n")
		texts = append(texts, text)
	}
	return lines.String(), texts
}

// Chunks, a permission request and the answer to a call arriving
// together, in one write, are delivered in the agent's order: the request
// after the chunks before it, and everything before the answer by the time
// the call returns, though later chunks were still buffered behind the
// answer; those arrive too with nothing more from the agent. PromptThen's
// hook runs at the answer's place. The client is slow, so that a call
// returning early would be seen.
func TestReadBatchKeepsOrderAroundRequestAndResponse(t *testing.T) {
	prompt := &PromptRequest{SessionID: "s", Prompt: []ContentBlock{TextBlock("hi")}}
	calls := map[string]func(*Conn, *orderClient) error{
		"Prompt": func(c *Conn, _ *orderClient) error {
			_, err := c.Prompt(waitfor.Context(t), prompt)
			return err
		},
		"PromptThen": func(c *Conn, client *orderClient) error {
			_, err := c.PromptThen(waitfor.Context(t), prompt, func(*PromptResponse, error) {
				client.mu.Lock()
				client.log = append(client.log, "then")
				client.mu.Unlock()
			})
			return err
		},
		"Call": func(c *Conn, _ *orderClient) error { return c.Call(context.Background(), "_x/ask", struct{}{}, nil) },
	}
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			client := &orderClient{slow: 2 * time.Millisecond}
			// A small queue keeps the dispatcher's runs short, so that it
			// counts messages delivered while later ones are still queued.
			c, p := newPair(t, client, &ConnOptions{MaxQueuedBytes: 2 << 10})
			p.handshake(c, fullCaps)
			type result struct {
				log []string
				err error
			}
			done := make(chan result, 1)
			go func() {
				err := call(c, client)
				done <- result{client.snapshot(), err}
			}()
			asked := p.recv()
			before, beforeTexts := chunkLines("a", 10)
			between, betweenTexts := chunkLines("b", 40)
			after, afterTexts := chunkLines("c", 10)
			perm := `{"jsonrpc":"2.0","id":7,"method":"session/request_permission","params":{"sessionId":"s","toolCall":{"toolCallId":"t1"},"options":[{"optionId":"o","name":"Allow","kind":"allow_once"}]}}` + "\n"
			answer := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"stopReason":"end_turn"}}`+"\n", asked.ID)
			wrote := make(chan error, 1)
			go func() { // the pipe is synchronous, and the agent reads the answer to its request meanwhile
				_, err := p.conn.Write([]byte(before + perm + between + answer + after))
				wrote <- err
			}()
			if m := p.recv(); string(m.ID) != "7" || m.Result == nil {
				t.Fatalf("the permission request was answered with %s", m.line)
			}
			r := waitfor.Recv(t, done, "the call to return")
			if r.err != nil {
				t.Fatal(r.err)
			}
			if err := waitfor.Recv(t, wrote, "wrote"); err != nil {
				t.Fatal(err)
			}
			want := append(append(beforeTexts, "perm"), betweenTexts...)
			if name == "PromptThen" {
				want = append(want, "then")
			}
			want = append(want, afterTexts...)
			if got, n := r.log, len(want)-len(afterTexts); len(got) < n || strings.Join(got[:n], " ") != strings.Join(want[:n], " ") {
				t.Fatalf("when the call returned, delivered %q; want it to start with %q", got, want[:n])
			}
			if got := client.waitLog(t, len(want)); strings.Join(got, " ") != strings.Join(want, " ") {
				t.Fatalf("delivered %q, want %q", got, want)
			}
		})
	}
}

// The read loop never holds decoded lines waiting for input that may not
// come: what is buffered is delivered when the agent goes quiet, after a
// last complete line followed by blank lines or by part of a line alike.
func TestReadBatchNeverWaitsForMoreInput(t *testing.T) {
	for name, tail := range map[string]string{
		"blank lines":  "\n \r\n\t\n",
		"partial line": `{"jsonrpc":"2.0","method":"session/upd`,
		"nothing":      "",
	} {
		t.Run(name, func(t *testing.T) {
			client := &orderClient{}
			pr, pw := io.Pipe()
			c := NewConn(pipeStream{Reader: pr, Writer: io.Discard, closer: pr}, client, nil)
			defer func() {
				pw.Close()
				<-c.Done()
			}()
			lines, want := chunkLines("q", 6)
			first := strings.Index(lines, "\n") + 1
			go pw.Write([]byte(lines[:first]))
			client.waitLog(t, 1)
			time.Sleep(10 * time.Millisecond)         // let the dispatcher go back to waiting
			go pw.Write([]byte(lines[first:] + tail)) // and then the agent says nothing more
			if got := client.waitLog(t, len(want)); strings.Join(got, " ") != strings.Join(want, " ") {
				t.Fatalf("delivered %q, want %q", got, want)
			}
		})
	}
}

// A run pushed as one charges a shared QueueBudget only what its fairness
// rule allows: a queue's first message whatever its size, then no more than
// the queue's share while the sum stays within the budget; the rest waits
// (nothing is dropped) and goes in once room appears, in order.
func TestQueueRunChargesBudgetWithinBound(t *testing.T) {
	const budgetBytes, size, runLen = 1000, 150, 10
	budget := NewQueueBudget(budgetBytes)
	queues := []*queue{newQueue(1<<20, budget), newQueue(1<<20, budget)}
	var pushers sync.WaitGroup
	push := func(q *queue, tag int) {
		run := make([]*inbound, runLen)
		for i := range run {
			run[i] = &inbound{size: size, seq: uint64(tag)} // seq is overwritten with the queue's count
		}
		pushers.Add(1)
		go func() {
			defer pushers.Done()
			q.pushRun(run)
		}()
	}
	held := func(q *queue) int {
		q.mu.Lock()
		defer q.mu.Unlock()
		return q.bytes
	}
	settle := func(want ...int) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for held(queues[0]) != want[0] || held(queues[1]) != want[1] || budget.Used() != want[0]+want[1] {
			if time.Now().After(deadline) {
				t.Fatalf("queues hold %d and %d bytes, budget used %d; want %v", held(queues[0]), held(queues[1]), budget.Used(), want)
			}
			time.Sleep(time.Millisecond)
		}
	}
	push(queues[0], 0)
	settle(900, 0) // alone, the queue may use the whole budget: 6 of 10
	push(queues[1], 1)
	settle(900, 150) // the second queue's first message passes the budget; no more
	popped := make([][]*inbound, 2)
	take := func(i, n int) {
		for range n {
			m, _ := queues[i].pop()
			popped[i] = append(popped[i], m)
			queues[i].done(m)
		}
	}
	take(0, 4) // 300 held, 150 + 300 used: each may now hold its share, 500
	settle(450, 450)
	for i := range queues {
		take(i, runLen-len(popped[i]))
	}
	pushers.Wait()
	settle(0, 0)
	for i := range queues {
		for k, m := range popped[i] {
			if m.seq != uint64(k+1) {
				t.Fatalf("queue %d: message %d came out as number %d", i, k+1, m.seq)
			}
		}
	}
}

// Several Conns flooding at once, each with a MaxQueuedBytes smaller than
// one line and all sharing a budget of a few lines, deliver every chunk in
// order: batches wait for room, they never drop.
func TestReadBatchesLoseNothingUnderTinyBounds(t *testing.T) {
	const conns, chunks = 3, 3000
	budget := NewQueueBudget(2 << 10)
	clients := make([]*orderClient, conns)
	wants := make([][]string, conns)
	var running []*Conn
	defer func() {
		for _, c := range running {
			c.Close()
			<-c.Done()
		}
	}()
	for i := range conns {
		clients[i] = &orderClient{}
		pr, pw := io.Pipe()
		c := NewConn(pipeStream{Reader: pr, Writer: io.Discard, closer: pr}, clients[i], &ConnOptions{MaxQueuedBytes: 64, Budget: budget})
		running = append(running, c)
		var lines string
		lines, wants[i] = chunkLines(fmt.Sprint(i, ":"), chunks)
		go func() {
			pw.Write([]byte(lines))
			pw.Close()
		}()
	}
	for i, client := range clients {
		if got := client.waitLog(t, chunks); strings.Join(got, " ") != strings.Join(wants[i], " ") {
			t.Fatalf("conn %d: delivered %d chunks out of order or with losses", i, len(got))
		}
	}
	for _, c := range running {
		waitfor.Closed(t, c.Done(), "the connection to end")
	}
	if used := budget.Used(); used != 0 {
		t.Fatalf("the budget still counts %d bytes with everything delivered", used)
	}
}

// TestReadBatchSingleAfterAWait: once a flush had to wait for room, the
// read loop hands on each message at once for tightFlushes flushes (a held
// batch is memory no budget counts), then batches again.
func TestReadBatchSingleAfterAWait(t *testing.T) {
	const size = 400
	c := &Conn{queue: newQueue(1000, nil)}
	msg := func() *inbound { return &inbound{method: methodSessionUpdate, size: size} }
	drain := func() {
		for {
			c.queue.mu.Lock()
			empty := len(c.queue.items)-c.queue.head == 0
			c.queue.mu.Unlock()
			if empty {
				return
			}
			m, _ := c.queue.pop()
			c.queue.done(m)
		}
	}
	c.enqueue(msg())
	c.enqueue(msg())
	if len(c.batch.run) != 2 {
		t.Fatalf("batch holds %d messages, want 2 (no wait yet)", len(c.batch.run))
	}
	c.enqueue(msg()) // three do not fit: the flush waits
	flushed := make(chan struct{})
	go func() { defer close(flushed); c.flushBatch() }()
	for {
		c.queue.mu.Lock()
		queued := len(c.queue.items) - c.queue.head
		c.queue.mu.Unlock()
		if queued == 2 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	m, _ := c.queue.pop() // room for the third
	c.queue.done(m)
	waitfor.Closed(t, flushed, "flushed")
	drain()
	for i := range tightFlushes {
		c.enqueue(msg())
		if len(c.batch.run) != 0 {
			t.Fatalf("flush %d after a wait: %d messages held back, want each handed on", i, len(c.batch.run))
		}
		drain()
	}
	c.enqueue(msg())
	c.enqueue(msg())
	if len(c.batch.run) != 2 {
		t.Errorf("after %d flushes without a wait the batch holds %d messages, want 2", tightFlushes, len(c.batch.run))
	}
}

func (c *orderClient) Updates(ctx context.Context, run []wire.Update[*SessionNotification]) {
	splitRun(ctx, run, c.SessionUpdates, nil)
}
