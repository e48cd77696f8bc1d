package acpclient

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/acphost/acphost/internal/waitfor"
)

// TestCallThenRunsAtTheAnswersPlace: the hook sees every update sent
// before the answer and none sent after it, with the raw result; an error
// answer reaches it as a *CallError naming the method.
func TestCallThenRunsAtTheAnswersPlace(t *testing.T) {
	rec := newRecorder()
	c, p := newPair(t, rec, nil)
	p.handshake(c, fullCaps)
	type seen struct {
		updates int
		result  string
		err     error
	}
	hooked := make(chan seen, 2)
	call := func(wantErr bool) {
		err := c.CallThen(waitfor.Context(t), "_vendor/steer", map[string]string{"sessionId": "s"}, nil,
			func(result json.RawMessage, err error) { hooked <- seen{rec.count(), string(result), err} })
		if (err != nil) != wantErr {
			t.Errorf("CallThen returned %v", err)
		}
	}
	go call(false)
	m := p.recv()
	p.send(chunkLineJSON("s", "before-1"), chunkLineJSON("s", "before-2"))
	p.sendf(`{"jsonrpc":"2.0","id":%s,"result":{"outcome":"injected"}}`, m.ID)
	p.send(chunkLineJSON("s", "after"))
	if got := waitfor.Recv(t, hooked, "the hook"); got.updates != 2 || got.result != `{"outcome":"injected"}` || got.err != nil {
		t.Fatalf("hook saw %d updates, %s, %v; want the 2 sent before the answer, its result", got.updates, got.result, got.err)
	}
	go call(true)
	m = p.recv()
	p.sendf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32603,"message":"no"}}`, m.ID)
	got := waitfor.Recv(t, hooked, "the hook of the error answer")
	var ce *CallError
	if !errors.As(got.err, &ce) || ce.Method != "_vendor/steer" || ce.Err.Code != -32603 {
		t.Fatalf("hook got %v, want a *CallError of _vendor/steer, code -32603", got.err)
	}
	rec.waitUpdates(t, 3)
}
