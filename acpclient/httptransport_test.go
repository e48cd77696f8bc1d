package acpclient_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/acptest"
	"github.com/acphost/acphost/internal/waitfor"
)

// The fake agent over Streamable HTTP: a turn whose updates come on the
// session's stream, one of them over the reader's buffer, and a
// permission request whose answer is POSTed back with the session's
// header (the server refuses it without).
func TestHTTPTurn(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	big := strings.Repeat("x", 100<<10)
	agent := &acptest.Transport{Script: acptest.Script{Prompts: []acptest.Turn{{Steps: []acptest.Step{
		{Text: "one "},
		{Permission: &acptest.Permission{OnSelect: map[string][]acptest.Step{"allow": {{Text: big}}}}},
		{Text: " two"},
	}}}}}
	var mu sync.Mutex
	var requests []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		requests = append(requests, r.Method+" "+r.Header.Get("Acp-Session-Id"))
		mu.Unlock()
		agent.ServeHTTP(w, r)
	}))
	defer srv.Close()

	client := &printer{}
	conn, err := acpclient.Connect(ctx, &acpclient.HTTPTransport{URL: srv.URL + "/acp"}, client, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// The same turn in memory says what the text must be.
	local := &printer{}
	lconn, err := acpclient.Connect(ctx, &acptest.Transport{Script: agent.Script}, local, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := wsTurn(t, ctx, lconn, local)
	lconn.Close()
	if got := wsTurn(t, ctx, conn, client); got != want || !strings.Contains(got, big) {
		t.Fatalf("text over HTTP: %d bytes, want %d", len(got), len(want))
	}
	if err := conn.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	agents := agent.Agents()
	if len(agents) != 1 {
		t.Fatalf("%d agents served, want 1", len(agents))
	}
	answer, err := agents[0].WaitFor(ctx, func(m acptest.Message) bool { return m.Method == "" && m.Result != nil })
	if err != nil || !strings.Contains(string(answer.Result), "allow") {
		t.Fatalf("the permission answer: %s %v", answer.Result, err)
	}
	mu.Lock()
	defer mu.Unlock()
	// initialize, the connection's stream, session/new, the session's
	// stream, the prompt, the permission answer, the DELETE.
	sess := ""
	var seen []string
	for _, r := range requests {
		if strings.HasPrefix(r, "GET ") && r != "GET " {
			sess = strings.TrimPrefix(r, "GET ")
		}
		seen = append(seen, r)
	}
	wantReqs := []string{"POST ", "GET ", "POST ", "GET " + sess, "POST " + sess, "POST " + sess, "DELETE "}
	if sess == "" || !sameSet(seen, wantReqs) {
		t.Fatalf("requests %q, want %q in some order", seen, wantReqs)
	}
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	n := map[string]int{}
	for _, s := range a {
		n[s]++
	}
	for _, s := range b {
		n[s]--
	}
	for _, v := range n {
		if v != 0 {
			return false
		}
	}
	return true
}

func TestHTTPTLSHeaderAndCookies(t *testing.T) {
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
		if r.Header.Get("Acp-Connection-Id") == "" { // initialize: a new connection
			c, err := r.Cookie("affinity")
			mu.Lock()
			if err == nil {
				cookies = append(cookies, c.Value)
			} else {
				cookies = append(cookies, "")
			}
			mu.Unlock()
			http.SetCookie(w, &http.Cookie{Name: "affinity", Value: "backend-7"})
		}
		agent.ServeHTTP(w, r)
	}))
	defer srv.Close()

	hc := srv.Client()
	hc.Jar = newJar(t)
	tr := &acpclient.HTTPTransport{URL: srv.URL + "/acp?token=hidden", HTTPClient: hc, Header: http.Header{"Authorization": {"Bearer secret"}}}
	for range 2 {
		client := &printer{}
		conn, err := acpclient.Connect(ctx, tr, client, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if got := wsTurn(t, ctx, conn, client); got != "hi" {
			t.Fatalf("text %q", got)
		}
		conn.Close()
	}
	mu.Lock()
	if len(cookies) != 2 || cookies[0] != "" || cookies[1] != "backend-7" {
		t.Fatalf("cookies sent with the initialize requests: %q, want none then the one the server set", cookies)
	}
	mu.Unlock()

	// Without the token initialize is refused, and the error says so
	// without showing the URL's query.
	conn, err := acpclient.Connect(ctx, &acpclient.HTTPTransport{URL: srv.URL + "/acp?token=hidden", HTTPClient: hc}, &printer{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_, err = conn.Initialize(ctx, &acpclient.InitializeRequest{})
	if err == nil || !strings.Contains(err.Error(), "401") || !strings.Contains(err.Error(), "refused") || strings.Contains(err.Error(), "hidden") {
		t.Fatalf("refused initialize: %v", err)
	}
}

func TestHTTPBadURL(t *testing.T) {
	for _, u := range []string{"ws://127.0.0.1:1/acp", "127.0.0.1:1", "http://%zz", "http:///acp"} {
		if _, err := (&acpclient.HTTPTransport{URL: u}).Connect(context.Background()); err == nil {
			t.Errorf("Connect(%q) succeeded", u)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := (&acpclient.HTTPTransport{URL: "http://127.0.0.1:1/acp"}).Connect(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Connect with a cancelled context: %v", err)
	}
}

// A hand-written server: initialize answered in pretty-printed JSON, then
// a connection's stream that sends an event in pieces, with comments and
// CRLF line ends, and then drops mid-event; the Conn ends with an error
// naming the endpoint, and a later call fails.
func TestHTTPPeerShapesAndDrop(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	drop := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodPost && r.Header.Get("Acp-Connection-Id") == "":
			var req struct{ ID json.RawMessage }
			json.NewDecoder(r.Body).Decode(&req)
			w.Header().Set("Acp-Connection-Id", "c1")
			io.WriteString(w, "{\n  \"jsonrpc\": \"2.0\",\n  \"id\": "+string(req.ID)+",\r\n  \"result\": {\"protocolVersion\": 1}\n}")
		case r.Method == http.MethodGet:
			w.Header().Set("Content-Type", "text/event-stream")
			f := w.(http.Flusher)
			io.WriteString(w, ":\r\n\r\nevent: message\r\ndata: {\"jsonrpc\":\"2.0\",\r\n")
			f.Flush()
			io.WriteString(w, "data: \"method\":\"session/update\",\"params\":{\"sessionId\":\"s\",\"update\":{\"sessionUpdate\":\"agent_message_chunk\",\"content\":{\"type\":\"text\",\"text\":\"pieces\"}}}}\r\n\r\n")
			io.WriteString(w, "data: {\"jsonrpc\":\"2.0\",\"method\":\"session/upd")
			f.Flush()
			<-drop
			panic(http.ErrAbortHandler) // cut the response mid-event
		default:
			w.WriteHeader(http.StatusAccepted)
		}
	}))
	defer srv.Close()

	client := &printer{}
	conn, err := acpclient.Connect(ctx, &acpclient.HTTPTransport{URL: srv.URL + "/acp"}, client, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	init, err := conn.Initialize(ctx, &acpclient.InitializeRequest{})
	if err != nil {
		t.Fatalf("initialize answered in pretty-printed JSON: %v", err)
	}
	if init.ProtocolVersion != 1 {
		t.Fatalf("protocol version %d", init.ProtocolVersion)
	}
	waitfor.Until(t, "the update sent in pieces", func() bool {
		client.mu.Lock()
		defer client.mu.Unlock()
		return client.text.String() == "pieces"
	})
	close(drop)
	select {
	case <-conn.Done():
	case <-ctx.Done():
		t.Fatal("the Conn did not end after the stream dropped")
	}
	if err := conn.Err(); err == nil || !strings.Contains(err.Error(), srv.URL+"/acp") || !strings.Contains(err.Error(), "lost") {
		t.Fatalf("Conn's error after the drop: %v, want one naming the endpoint", err)
	}
	_, err = conn.NewSession(ctx, &acpclient.NewSessionRequest{Cwd: "/src"})
	if err == nil || errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a call after the drop: %v", err)
	}
}
