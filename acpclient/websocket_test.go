package acpclient_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/acptest"
)

// wsURL is the ws:// URL of a test server.
func wsURL(srv *httptest.Server) string {
	return "ws" + strings.TrimPrefix(srv.URL, "http") + "/acp"
}

// wsTurn runs initialize, session/new and one prompt over conn and
// returns the agent's text.
func wsTurn(t *testing.T, ctx context.Context, conn *acpclient.Conn, client *printer) string {
	t.Helper()
	if _, err := conn.Initialize(ctx, &acpclient.InitializeRequest{}); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	sess, err := conn.NewSession(ctx, &acpclient.NewSessionRequest{Cwd: "/src"})
	if err != nil {
		t.Fatalf("session/new: %v", err)
	}
	resp, err := conn.Prompt(ctx, &acpclient.PromptRequest{SessionID: sess.SessionID, Prompt: []acpclient.ContentBlock{acpclient.TextBlock("go")}})
	if err != nil {
		t.Fatalf("prompt: %v", err)
	}
	if resp.StopReason != acpclient.StopEndTurn {
		t.Fatalf("stop reason %q", resp.StopReason)
	}
	client.mu.Lock()
	defer client.mu.Unlock()
	return client.text.String()
}

func TestWebSocketTurn(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// 40 KiB of text in one update: over the WebSocket library's default
	// read limit, which the stream lifts (the Conn's line cap applies).
	big := strings.Repeat("x", 40<<10)
	agent := &acptest.Transport{Script: acptest.Script{Prompts: []acptest.Turn{{Steps: []acptest.Step{
		{Text: "one "}, {Text: big}, {Text: " two"},
	}}}}}
	srv := httptest.NewServer(agent)
	defer srv.Close()

	client := &printer{}
	conn, err := acpclient.Connect(ctx, &acpclient.WebSocketTransport{URL: wsURL(srv)}, client, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := wsTurn(t, ctx, conn, client), "one "+big+" two"; got != want {
		t.Fatalf("text over the websocket: %d bytes, want %d", len(got), len(want))
	}
	if err := conn.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	agents := agent.Agents()
	if len(agents) != 1 {
		t.Fatalf("%d agents served, want 1", len(agents))
	}
	if _, err := agents[0].WaitFor(ctx, acptest.Method("session/prompt")); err != nil {
		t.Fatal(err)
	}
}

func TestWebSocketTLSHeaderAndCookies(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	agent := &acptest.Transport{Script: acptest.Script{Prompts: []acptest.Turn{{Steps: []acptest.Step{{Text: "hi"}}}}}}
	var mu sync.Mutex
	var cookies []string
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer secret" {
			http.Error(w, "no token", http.StatusUnauthorized)
			return
		}
		c, err := r.Cookie("affinity")
		mu.Lock()
		if err == nil {
			cookies = append(cookies, c.Value)
		} else {
			cookies = append(cookies, "")
		}
		mu.Unlock()
		http.SetCookie(w, &http.Cookie{Name: "affinity", Value: "backend-7"})
		agent.ServeHTTP(w, r)
	}))
	defer srv.Close()

	// The test server's certificate is trusted through the HTTP client;
	// its Jar keeps the cookie between connections.
	hc := srv.Client()
	hc.Jar = newJar(t)
	tr := &acpclient.WebSocketTransport{URL: wsURL(srv) + "?token=hidden", HTTPClient: hc, Header: http.Header{"Authorization": {"Bearer secret"}}}
	for range 2 {
		client := &printer{}
		conn, err := acpclient.Connect(ctx, tr, client, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := wsTurn(t, ctx, conn, client); got != "hi" {
			t.Fatalf("text %q", got)
		}
		conn.Close()
	}
	mu.Lock()
	defer mu.Unlock()
	if len(cookies) != 2 || cookies[0] != "" || cookies[1] != "backend-7" {
		t.Fatalf("cookies sent with the upgrades: %q, want none then the one the server set", cookies)
	}

	// Without the token the upgrade is refused, and the error says so
	// without showing the URL's query.
	_, err := (&acpclient.WebSocketTransport{URL: wsURL(srv) + "?token=hidden", HTTPClient: hc}).Connect(ctx)
	if err == nil || !strings.Contains(err.Error(), "401") || !strings.Contains(err.Error(), "refused") || strings.Contains(err.Error(), "hidden") {
		t.Fatalf("refused upgrade: %v", err)
	}
}

func TestWebSocketBadURL(t *testing.T) {
	for _, u := range []string{"http://127.0.0.1:1/acp", "127.0.0.1:1", "ws://%zz"} {
		if _, err := (&acpclient.WebSocketTransport{URL: u}).Connect(context.Background()); err == nil {
			t.Errorf("Connect(%q) succeeded", u)
		}
	}
}

// A peer may send pretty-printed JSON (line breaks between tokens) and
// binary messages (which the draft says to ignore); a dropped connection
// ends the Conn with an error naming the URL.
func TestWebSocketPeerShapesAndDrop(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	drop := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer ws.CloseNow()
		_, msg, err := ws.Read(r.Context()) // initialize, id 0 or 1
		if err != nil {
			return
		}
		id := "0"
		if strings.Contains(string(msg), `"id":1`) {
			id = "1"
		}
		ws.Write(r.Context(), websocket.MessageBinary, []byte("not json, and binary"))
		ws.Write(r.Context(), websocket.MessageText, []byte("{\n  \"jsonrpc\": \"2.0\",\n  \"id\": "+id+",\r\n  \"result\": {\"protocolVersion\": 1}\n}"))
		<-drop
	}))
	defer srv.Close()

	conn, err := acpclient.Connect(ctx, &acpclient.WebSocketTransport{URL: wsURL(srv)}, &printer{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	init, err := conn.Initialize(ctx, &acpclient.InitializeRequest{})
	if err != nil {
		t.Fatalf("initialize answered in pretty-printed JSON after a binary message: %v", err)
	}
	if init.ProtocolVersion != 1 {
		t.Fatalf("protocol version %d", init.ProtocolVersion)
	}
	close(drop) // the handler returns: the connection is cut without a close message
	select {
	case <-conn.Done():
	case <-ctx.Done():
		t.Fatal("the Conn did not end after the connection dropped")
	}
	if err := conn.Err(); err == nil || !strings.Contains(err.Error(), "/acp") {
		t.Fatalf("Conn's error after the drop: %v, want one naming the endpoint", err)
	}
	_, err = conn.NewSession(ctx, &acpclient.NewSessionRequest{Cwd: "/src"})
	if err == nil || errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a call after the drop: %v", err)
	}
}

func newJar(t *testing.T) http.CookieJar {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return jar
}
