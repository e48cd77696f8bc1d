package acpclient

import (
	"context"
	"testing"

	"github.com/acphost/acphost/internal/waitfor"
)

// slowStarter is a Terminals whose terminal/create takes until release is
// closed, answered synchronously or, with async, through StartTerminal.
type slowStarter struct {
	fullClient
	release chan struct{}
	calls   chan string
}

func (s slowStarter) CreateTerminal(context.Context, *CreateTerminalRequest) (*CreateTerminalResponse, error) {
	s.calls <- "CreateTerminal"
	<-s.release
	return &CreateTerminalResponse{TerminalID: "sync"}, nil
}

type asyncStarter struct{ slowStarter }

func (s asyncStarter) StartTerminal(_ context.Context, _ *CreateTerminalRequest, reply func(*CreateTerminalResponse, error)) {
	s.calls <- "StartTerminal"
	go func() {
		<-s.release
		reply(&CreateTerminalResponse{TerminalID: "async"}, nil)
	}()
}

// TestTerminalStarterDoesNotHoldDispatch: with TerminalStarter, a
// terminal/create still starting does not hold up the messages after it;
// its answer comes when the client replies.
func TestTerminalStarterDoesNotHoldDispatch(t *testing.T) {
	slow := slowStarter{fullClient: fullClient{newRecorder()}, release: make(chan struct{}), calls: make(chan string, 1)}
	c, p := newPair(t, asyncStarter{slow}, nil)
	p.handshake(c, `{}`)
	p.send(`{"jsonrpc":"2.0","id":7,"method":"terminal/create","params":{"sessionId":"s","command":"ls"}}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"after"}}}}`)
	if got := waitfor.Recv(t, slow.calls, "the slow client's call"); got != "StartTerminal" {
		t.Fatalf("Conn called %s", got)
	}
	slow.recorder.waitUpdates(t, 1) // delivered while the terminal is still starting
	close(slow.release)
	if m := p.recv(); string(m.ID) != "7" || string(m.Result) != `{"terminalId":"async"}` {
		t.Fatalf("answer %s", m.line)
	}
}
