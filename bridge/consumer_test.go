package bridge

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/acptest"
	"github.com/acphost/acphost/internal/waitfor"
)

// TestConsumerMayQueryBridgeWhileAgentsWait: with the event queue full, a
// consumer that asks the bridge about its state before reading on must not
// deadlock with the delivery that is waiting for it.
func TestConsumerMayQueryBridgeWhileAgentsWait(t *testing.T) {
	var steps []acptest.Step
	for i := range 200 {
		steps = append(steps, update(fmt.Sprintf(`{"sessionUpdate":"plan","entries":[{"content":"step %d","priority":"low","status":"pending"}]}`, i)))
	}
	h := NewHost(&HostOptions{MaxPendingEvents: 2})
	var b *Bridge
	ready := make(chan struct{})
	consumed := make(chan int)
	go func() {
		<-ready
		n := 0
		for ev := range h.Events() {
			// Queries an app makes while handling an event.
			_ = b.Running()
			_ = b.InitializeResponse()
			_ = b.Session(ev.Session)
			_, _ = h.Bridge(b.ID())
			n++
		}
		consumed <- n
	}()
	var err error
	b, err = h.Start(context.Background(), agentConfig(t, "q", acptest.Script{Prompts: []acptest.Turn{{Steps: steps}}}))
	if err != nil {
		t.Fatal(err)
	}
	close(ready)
	s, err := b.OpenSession(waitfor.Context(t), SessionConfig{Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := s.Prompt(waitfor.Context(t), acpclient.TextBlock("go")); done <- err }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("deadlock between a slow consumer and event delivery")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	h.Shutdown(ctx)
	if n := waitfor.Recv(t, consumed, "consumed"); n < 200 {
		t.Fatalf("consumed %d events", n)
	}
}
