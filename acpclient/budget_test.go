package acpclient

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// gatedClient holds every update until open is closed, then collects the
// text.
type gatedClient struct {
	open chan struct{}
	mu   sync.Mutex
	text strings.Builder
}

func (c *gatedClient) SessionUpdate(_ context.Context, n *SessionNotification) {
	<-c.open
	if u, ok := n.Update.(*AgentMessageChunk); ok {
		c.mu.Lock()
		c.text.WriteString(u.Content.Text)
		c.mu.Unlock()
	}
}

func (c *gatedClient) RequestPermission(_ context.Context, _ *RequestPermissionRequest, reply func(*RequestPermissionResponse, error)) {
	reply(PermissionCancelled(), nil)
}

// TestQueueBudgetBoundsConnsTogether: two Conns share a budget far smaller
// than their own MaxQueuedBytes while their Client is stalled; the agents
// get to write only about the budget (plus a line or two and the line
// reader's buffer each), and once the Client goes on, everything arrives,
// including a line larger than the whole budget.
func TestQueueBudgetBoundsConnsTogether(t *testing.T) {
	const budgetBytes, lines, lineText = 64 << 10, 100, 4 << 10
	budget := NewQueueBudget(budgetBytes)
	client := &gatedClient{open: make(chan struct{})}
	var written atomic.Int64
	var want [2]string
	var agents sync.WaitGroup
	conns := make([]*Conn, 2)
	for i := range conns {
		ct, at := NewInMemoryTransports()
		var texts []string
		for j := range lines {
			texts = append(texts, fmt.Sprintf("%d:%04d:", i, j)+strings.Repeat("x", lineText))
		}
		if i == 0 {
			texts[lines/2] = strings.Repeat("H", 4*budgetBytes) // more than the budget
		}
		want[i] = strings.Join(texts, "")
		agents.Add(1)
		go func() {
			defer agents.Done()
			for _, text := range texts {
				n, err := fmt.Fprintf(at.Stream.(net.Conn), "%s{\"type\":\"text\",\"text\":%q}}}}\n", chunkPrefix, text)
				written.Add(int64(n))
				if err != nil {
					return
				}
			}
		}()
		conns[i] = NewConn(ct.Stream, client, &ConnOptions{MaxQueuedBytes: 1 << 20, Budget: budget})
	}
	var opened sync.Once
	openGate := func() { opened.Do(func() { close(client.open) }) }
	defer func() {
		openGate() // a failed check must not leave the dispatchers stuck
		for _, c := range conns {
			c.Close()
			<-c.Done()
		}
	}()
	waitSettled(t, &written)
	slack := 2 * (lineBufferSize + firstBufferSize + 3*(lineText+len(chunkPrefix)+32))
	if got := written.Load(); got > budgetBytes+int64(slack) {
		t.Fatalf("the agents wrote %d bytes while nothing was delivered; the shared budget is %d (+%d slack)", got, budgetBytes, slack)
	}
	openGate()
	agents.Wait()
	deadline := time.Now().Add(10 * time.Second)
	for {
		client.mu.Lock()
		got := client.text.Len()
		client.mu.Unlock()
		if got == len(want[0])+len(want[1]) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("delivered %d bytes of text, want %d", got, len(want[0])+len(want[1]))
		}
		time.Sleep(2 * time.Millisecond)
	}
	for i, w := range want {
		if !strings.Contains(client.text.String(), w[:64]) {
			t.Errorf("agent %d's text is missing", i)
		}
	}
	// The client has the text before the dispatcher is through with the
	// message that carried it, and gives its bytes back.
	for deadline := time.Now().Add(10 * time.Second); budget.Used() != 0; time.Sleep(2 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the budget still counts %d bytes with everything delivered", budget.Used())
		}
	}
}

// waitSettled returns once n has stopped changing for a while (the writers
// are blocked), failing after a deadline.
func waitSettled(t *testing.T, n *atomic.Int64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	last, still := n.Load(), 0
	for still < 10 {
		if time.Now().After(deadline) {
			t.Fatal("the writers never stopped")
		}
		time.Sleep(2 * time.Millisecond)
		if cur := n.Load(); cur != last {
			last, still = cur, 0
			continue
		}
		still++
	}
}
