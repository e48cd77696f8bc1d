package acpclient

import (
	"context"
	"testing"
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
		resp, err := c.PromptThen(context.Background(), &PromptRequest{SessionID: "s", Prompt: []ContentBlock{TextBlock("x")}},
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
	if got := <-seen; got != 2 {
		t.Fatalf("hook ran after %d updates, want exactly the 2 sent before the answer", got)
	}
	<-done
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
		_, err := c.PromptThen(context.Background(), &PromptRequest{SessionID: "s", Prompt: []ContentBlock{TextBlock("x")}},
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
	r := <-done
	if r.err == nil || !r.hook || r.count < 50 {
		t.Fatalf("error answer returned with hook=%v after %d/50 updates: %v", r.hook, r.count, r.err)
	}
}
