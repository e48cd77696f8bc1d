package acpclient

import (
	"testing"
	"time"

	"github.com/acphost/acphost/internal/waitfor"
)

// TestPromptThenRunsAtTheAnswersPlace: the hook sees every update sent
// before the answer and none sent after it.
func TestPromptThenRunsAtTheAnswersPlace(t *testing.T) {
	rec := newRecorder()
	c, p := newPair(t, rec, nil)
	p.handshake(c, fullCaps)
	seen := make(chan int, 1)
	done := make(chan *PromptResponse, 1)
	go func() {
		resp, err := c.PromptThen(waitfor.Context(t), &PromptRequest{SessionID: "s", Prompt: []ContentBlock{TextBlock("x")}},
			func(resp *PromptResponse, err error) {
				if err != nil || resp.StopReason != StopEndTurn {
					t.Errorf("hook got %v, %v", resp, err)
				}
				seen <- rec.count()
			})
		if err != nil {
			t.Error(err)
		}
		done <- resp
	}()
	m := p.recv()
	p.send(chunkLineJSON("s", "before-1"), chunkLineJSON("s", "before-2"))
	p.sendf(`{"jsonrpc":"2.0","id":%s,"result":{"stopReason":"end_turn"}}`, m.ID)
	p.send(chunkLineJSON("s", "after"))
	if got := waitfor.Recv(t, seen, "seen"); got != 2 {
		t.Fatalf("hook ran after %d updates, want exactly the 2 sent before the answer", got)
	}
	waitfor.Closed(t, done, "the call to return")
	rec.waitUpdates(t, 3)
}

// TestErrorAnswerKeepsOrdering: a prompt answered with an error returns
// only after its hook and every earlier update have been delivered.
func TestErrorAnswerKeepsOrdering(t *testing.T) {
	rec := newRecorder()
	c, p := newPair(t, rec, nil)
	p.handshake(c, fullCaps)
	hookRan := make(chan struct{})
	type result struct {
		count int
		hook  bool
		err   error
	}
	done := make(chan result, 1)
	go func() {
		_, err := c.PromptThen(waitfor.Context(t), &PromptRequest{SessionID: "s", Prompt: []ContentBlock{TextBlock("x")}},
			func(_ *PromptResponse, err error) { close(hookRan) })
		hook := false
		select {
		case <-hookRan:
			hook = true
		default:
		}
		done <- result{rec.count(), hook, err}
	}()
	m := p.recv()
	for i := 0; i < 50; i++ {
		p.send(chunkLineJSON("s", "x"))
	}
	p.sendf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32603,"message":"backend failed"}}`, m.ID)
	r := waitfor.Recv(t, done, "the call to return")
	if r.err == nil || !r.hook || r.count < 50 {
		t.Fatalf("error answer returned with hook=%v after %d/50 updates: %v", r.hook, r.count, r.err)
	}
}

// TestDeathDeliversEverythingFirst: when the agent dies mid-call, the call
// fails only after every message it sent before dying was delivered.
func TestDeathDeliversEverythingFirst(t *testing.T) {
	rec := newRecorder()
	rec.block = make(chan struct{})
	c, p := newPair(t, rec, nil)
	p.handshake(c, fullCaps)
	done := make(chan int, 1)
	go func() {
		_, err := c.Prompt(waitfor.Context(t), &PromptRequest{SessionID: "s", Prompt: []ContentBlock{TextBlock("x")}})
		if err == nil {
			t.Error("prompt on a dead agent succeeded")
		}
		done <- rec.count()
	}()
	p.recv()
	for i := 0; i < 5; i++ {
		p.send(chunkLineJSON("s", "partial"))
	}
	p.conn.Close() // the agent dies while the client is still busy
	select {
	case got := <-done:
		t.Fatalf("Prompt failed with %d of 5 earlier updates delivered", got)
	case <-time.After(100 * time.Millisecond):
	}
	for i := 0; i < 5; i++ {
		rec.block <- struct{}{}
	}
	if got := waitfor.Recv(t, done, "the call to return"); got != 5 {
		t.Fatalf("Prompt failed after %d of the 5 updates sent before the death", got)
	}
}
