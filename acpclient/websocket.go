package acpclient

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"sync"

	"github.com/coder/websocket"

	"github.com/acphost/acphost/internal/wsstream"
)

// WebSocketTransport reaches an agent that runs as a service (on another
// machine, in a container) rather than as a process the app starts: the
// WebSocket profile of ACP's remote transport draft. Connect upgrades a
// GET on URL to a WebSocket; every JSON-RPC message is then one text
// message each way, and the Conn above it behaves as over a process's
// pipes: the same ordering, the same line cap (a message is passed
// through as it arrives, never gathered whole), and a dropped connection
// ends the Conn with an error naming the URL.
//
// Each Connect is a new connection, so a bridge.Config with a
// WebSocketTransport reconnects where it would restart an agent process,
// and resumes its sessions (with session/load or session/resume) if the
// service kept them. Use it by pointer; its fields are set before the
// first Connect.
type WebSocketTransport struct {
	// URL is the agent's endpoint: ws:// or wss://, conventionally ending
	// in /acp.
	URL string
	// Header is sent with every upgrade request, e.g. Authorization.
	Header http.Header
	// HTTPClient makes the upgrade requests: its Transport's
	// TLSClientConfig sets the certificates trusted (and presented), its
	// Jar keeps the cookies the service sets (the draft requires a client
	// to send them back, for session affinity behind a load balancer).
	// Nil means a client of the transport's own, with a cookie jar kept
	// across its connections so a reconnect reaches the same backend.
	HTTPClient *http.Client

	once   sync.Once
	client *http.Client
}

// Connect opens a WebSocket to the agent. ctx bounds the dial and the
// upgrade only; the connection lasts until the returned stream is closed.
func (t *WebSocketTransport) Connect(ctx context.Context) (io.ReadWriteCloser, error) {
	u, err := url.Parse(t.URL)
	if err != nil {
		return nil, fmt.Errorf("acpclient: websocket URL: %w", err)
	}
	if u.Scheme != "ws" && u.Scheme != "wss" {
		return nil, fmt.Errorf("acpclient: websocket URL %q: the scheme must be ws or wss", u.Redacted())
	}
	name := endpointName(u)
	t.once.Do(func() {
		t.client = t.HTTPClient
		if t.client == nil {
			jar, _ := cookiejar.New(nil) // New fails only with a bad PublicSuffixList, and it has none
			t.client = &http.Client{Jar: jar}
		}
	})
	ws, resp, err := websocket.Dial(ctx, t.URL, &websocket.DialOptions{HTTPClient: t.client, HTTPHeader: t.Header})
	if resp != nil && resp.Body != nil {
		resp.Body.Close()
	}
	if err != nil {
		if resp != nil && resp.StatusCode != http.StatusSwitchingProtocols {
			return nil, fmt.Errorf("acpclient: websocket %s: the upgrade was refused: %s: %w", name, resp.Status, err)
		}
		return nil, fmt.Errorf("acpclient: websocket %s: %w", name, err)
	}
	return wsstream.New(ws, name), nil
}

// endpointName is the URL as errors show it: without credentials or a
// query, which may carry a token.
func endpointName(u *url.URL) string {
	v := *u
	v.User = nil
	v.RawQuery, v.ForceQuery, v.Fragment = "", false, ""
	return v.String()
}
