package acptest

import (
	"context"
	"net/http"
	"strings"

	"github.com/coder/websocket"

	"github.com/acphost/acphost/internal/wsstream"
)

// ServeHTTP serves the fake agent as a service, over either profile of
// ACP's remote transport draft: a GET with Upgrade: websocket is the
// WebSocket profile (reach it with acpclient.WebSocketTransport), and
// POST, GET and DELETE are the Streamable HTTP profile (reach it with
// acpclient.HTTPTransport), routed as the official TypeScript SDK's server
// routes them. Each connection (an upgrade, or an initialize POST) gets a
// fresh agent that follows Script, as each Connect does, and the agents
// are listed by Agents. Mount it on an httptest.Server.
//
// The connection ends when the client closes it (a close message; a
// DELETE, or the end of the request that reads the connection's stream),
// or when an Exit step ends the agent (the WebSocket is then closed
// normally, or the streams end, and the client reads end of file).
func (t *Transport) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
		t.serveStreamable(w, r)
		return
	}
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
