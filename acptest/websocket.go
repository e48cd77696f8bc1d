package acptest

import (
	"context"
	"net/http"

	"github.com/coder/websocket"

	"github.com/acphost/acphost/internal/wsstream"
)

// ServeHTTP serves the fake agent as a service, over the WebSocket profile
// of ACP's remote transport draft: each upgraded request gets a fresh agent
// that follows Script, as each Connect does, and the agents are listed by
// Agents. Mount it on an httptest.Server and reach it with
// acpclient.WebSocketTransport. A request that is not an upgrade is
// refused (426).
//
// The connection ends when the client closes it, or when an Exit step ends
// the agent (the WebSocket is then closed normally, and the client reads
// end of file).
func (t *Transport) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ws, err := websocket.Accept(w, r, nil)
	if err != nil {
		return // Accept has answered
	}
	a := NewAgent(t.Script)
	a.Stderr = t.Stderr
	t.mu.Lock()
	t.agents = append(t.agents, a)
	t.mu.Unlock()

	s := wsstream.New(ws, r.RemoteAddr)
	defer s.Close()
	// The agent's end is its own: the request's context ends with the
	// handler, not with the test server's shutdown.
	_ = a.Serve(context.WithoutCancel(r.Context()), s, s)
}
