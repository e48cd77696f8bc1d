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
