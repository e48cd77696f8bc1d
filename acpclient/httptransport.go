package acpclient

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"sync"

	"github.com/acphost/acphost/internal/httpstream"
)

// HTTPTransport reaches an agent that runs as a service over the
// Streamable HTTP profile of ACP's remote transport draft, the profile for
// networks where a WebSocket cannot pass (some proxies and gateways).
// Every message the Conn sends is one POST to URL: the initialize request
// first, answered at once with the connection's Acp-Connection-Id, then the
// rest, each answered 202 Accepted. The agent's messages arrive as
// server-sent events on long-lived GET streams: one for the connection,
// and one per session (with Acp-Session-Id), opened when a session is
// created or first named. Close stops them and sends the DELETE that ends
// the connection on the server.
//
// It follows the official TypeScript SDK 2.4.0, which is where the draft
// is implemented, where the two differ: the SDK opens a session's stream
// before it POSTs for the session and speaks HTTP/1.1 as well as the
// HTTP/2 the draft asks for; a 409 refuses one session (its requests are
// answered with an error until session/load or session/resume reattaches
// it) while 401, 403, 404 and 410 end the connection; a POST refused with
// another status fails only its request, with a JSON-RPC error whose data
// holds the status and the body's start.
//
// The Conn above it behaves as over a process's pipes, with one
// difference in ordering: what one stream carries is read in the order
// the agent sent it, and each event is passed on whole before the next,
// but the streams are not ordered against each other. A session's
// updates and requests, and the answers to requests about it, come on
// its stream; the rest, including the answers to session/new and
// session/load, on the connection's. So a session/load may be answered
// before the last of the history it replays has been read. An event's
// data is passed through as it arrives, never gathered whole, so the
// Conn's line cap (MaxLineBytes) bounds memory. The connection's stream
// ending cleanly is the end of file, read once the sessions' streams have
// ended too (the server ends them with it); a stream or a POST lost to
// the network ends the Conn with an error naming the URL (without its
// query or credentials).
//
// Each Connect is a new connection, so a bridge.Config with an
// HTTPTransport reconnects where it would restart an agent process, and
// resumes its sessions if the service kept them. Use it by pointer; its
// fields are set before the first Connect.
type HTTPTransport struct {
	// URL is the agent's endpoint: http:// or https://, conventionally
	// ending in /acp.
	URL string
	// Header is sent with every request, e.g. Authorization.
	Header http.Header
	// HTTPClient makes the requests: its Transport's TLSClientConfig sets
	// the certificates, its Jar keeps the cookies the service sets (for
	// session affinity behind a load balancer). Its Timeout must be zero,
	// as the streams last as long as the connection. Nil means a client
	// of the transport's own, with a cookie jar kept across its
	// connections so a reconnect reaches the same backend.
	HTTPClient *http.Client

	once   sync.Once
	client *http.Client
}

// Connect returns a connection to the agent. Nothing is sent until the
// Conn writes its initialize request, so ctx is only checked; the
// connection lasts until the returned stream is closed.
func (t *HTTPTransport) Connect(ctx context.Context) (io.ReadWriteCloser, error) {
	u, err := url.Parse(t.URL)
	if err != nil {
		return nil, fmt.Errorf("acpclient: http URL: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("acpclient: http URL %q: want http:// or https:// and a host", u.Redacted())
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("acpclient: http %s: %w", endpointName(u), err)
	}
	t.once.Do(func() {
		t.client = t.HTTPClient
		if t.client == nil {
			jar, _ := cookiejar.New(nil) // New fails only with a bad PublicSuffixList, and it has none
			t.client = &http.Client{Jar: jar}
		}
	})
	return httpstream.New(httpstream.Config{URL: t.URL, Name: endpointName(u), Client: t.client, Header: t.Header}), nil
}
