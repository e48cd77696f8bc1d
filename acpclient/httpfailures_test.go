package acpclient_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/internal/waitfor"
)

// failingServer is a hand-written Streamable HTTP server whose refusals a
// test sets: a 409 on a session's stream, other statuses on POSTs.
type failingServer struct {
	out chan string // the connection's stream

	endSession chan struct{} // closing it ends the open session streams
	prompted   chan struct{} // a prompt POST was accepted

	mu         sync.Mutex
	sessionGET int              // GETs of a session's stream
	refuse     bool             // GET of a session's stream is refused (409)
	postStatus map[string][]int // method -> statuses for its next POSTs
}

func (f *failingServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet:
		f.mu.Lock()
		refuse, end := f.refuse, f.endSession
		if r.Header.Get("Acp-Session-Id") != "" {
			f.sessionGET++
		}
		f.mu.Unlock()
		if r.Header.Get("Acp-Session-Id") != "" && refuse {
			http.Error(w, "the stream already has a reader", http.StatusConflict)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.(http.Flusher).Flush()
		if r.Header.Get("Acp-Session-Id") != "" {
			select {
			case <-r.Context().Done():
			case <-end:
			}
			return
		}
		for {
			select {
			case line := <-f.out:
				io.WriteString(w, "data: "+line+"\n\n")
				w.(http.Flusher).Flush()
			case <-r.Context().Done():
				return
			}
		}
	case http.MethodPost:
		var msg struct {
			ID     json.RawMessage
			Method string
		}
		json.NewDecoder(r.Body).Decode(&msg)
		if r.Header.Get("Acp-Connection-Id") == "" {
			w.Header().Set("Acp-Connection-Id", "c")
			io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(msg.ID)+`,"result":{"protocolVersion":1,"agentCapabilities":{"loadSession":true}}}`)
			return
		}
		f.mu.Lock()
		status := http.StatusAccepted
		if st := f.postStatus[msg.Method]; len(st) > 0 {
			status, f.postStatus[msg.Method] = st[0], st[1:]
		}
		f.mu.Unlock()
		if status != http.StatusAccepted {
			http.Error(w, "refused by the test", status)
			return
		}
		w.WriteHeader(status)
		switch msg.Method {
		case "session/new":
			f.out <- `{"jsonrpc":"2.0","id":` + string(msg.ID) + `,"result":{"sessionId":"s1"}}`
		case "session/load":
			f.out <- `{"jsonrpc":"2.0","id":` + string(msg.ID) + `,"result":{}}`
		case "session/prompt":
			if f.prompted != nil {
				f.prompted <- struct{}{}
			}
		}
	case http.MethodDelete:
		w.WriteHeader(http.StatusAccepted)
	}
}

// A 409 on a session's stream fails that session's requests, not the
// connection, until session/load reattaches it; a POST refused with 500
// fails only its request; one refused with 404 (the connection is gone)
// ends the Conn.
func TestHTTPRefusals(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	f := &failingServer{out: make(chan string, 16), refuse: true, postStatus: map[string][]int{
		"session/prompt": {http.StatusInternalServerError, http.StatusNotFound},
	}}
	srv := httptest.NewServer(f)
	defer srv.Close()
	conn, err := acpclient.Connect(ctx, &acpclient.HTTPTransport{URL: srv.URL + "/acp"}, &printer{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Initialize(ctx, &acpclient.InitializeRequest{}); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.NewSession(ctx, &acpclient.NewSessionRequest{Cwd: "/src"}); err != nil {
		t.Fatal(err)
	}
	prompt := &acpclient.PromptRequest{SessionID: "s1", Prompt: []acpclient.ContentBlock{acpclient.TextBlock("go")}}
	if _, err := conn.Prompt(ctx, prompt); err == nil || !strings.Contains(err.Error(), "409") {
		t.Fatalf("prompt for a refused session: %v, want the 409", err)
	}
	if _, err := conn.Prompt(ctx, prompt); err == nil || !strings.Contains(err.Error(), "409") {
		t.Fatalf("a second prompt for the refused session: %v, want the 409 again", err)
	}

	f.mu.Lock()
	f.refuse = false
	f.mu.Unlock()
	if _, err := conn.LoadSession(ctx, &acpclient.LoadSessionRequest{SessionID: "s1", Cwd: "/src"}); err != nil {
		t.Fatalf("session/load reattaching the session: %v", err)
	}
	if _, err := conn.Prompt(ctx, prompt); err == nil || !strings.Contains(err.Error(), "500") {
		t.Fatalf("prompt refused with 500: %v, want that status", err)
	}
	if err := conn.Err(); err != nil {
		t.Fatalf("the Conn ended after one request was refused: %v", err)
	}
	if _, err := conn.Prompt(ctx, prompt); err == nil {
		t.Fatal("prompt refused with 404 succeeded")
	}
	select {
	case <-conn.Done():
	case <-ctx.Done():
		t.Fatal("the Conn did not end after a 404 (connection gone)")
	}
	if err := conn.Err(); err == nil || !strings.Contains(err.Error(), "404") || !strings.Contains(err.Error(), srv.URL) {
		t.Fatalf("Conn's error after a 404: %v, want the status and the endpoint", err)
	}
}

// A session's stream that the server ends fails the session's requests
// in flight (their answers can no longer come); the session's next
// message opens its stream again.
func TestHTTPSessionStreamEnds(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	f := &failingServer{out: make(chan string, 16), endSession: make(chan struct{}), prompted: make(chan struct{}, 1)}
	srv := httptest.NewServer(f)
	defer srv.Close()
	conn, err := acpclient.Connect(ctx, &acpclient.HTTPTransport{URL: srv.URL + "/acp"}, &printer{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Initialize(ctx, &acpclient.InitializeRequest{}); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.NewSession(ctx, &acpclient.NewSessionRequest{Cwd: "/src"}); err != nil {
		t.Fatal(err)
	}
	prompt := &acpclient.PromptRequest{SessionID: "s1", Prompt: []acpclient.ContentBlock{acpclient.TextBlock("go")}}
	done := make(chan error, 1)
	go func() {
		_, err := conn.Prompt(ctx, prompt)
		done <- err
	}()
	waitfor.Recv(t, f.prompted, "the prompt's POST")
	f.mu.Lock()
	close(f.endSession)
	f.endSession = make(chan struct{})
	f.mu.Unlock()
	if err := waitfor.Recv(t, done, "the prompt to fail"); err == nil || !strings.Contains(err.Error(), "stream ended") {
		t.Fatalf("prompt in flight when its session's stream ended: %v", err)
	}
	go conn.Prompt(ctx, prompt) // never answered; it reopens the stream
	waitfor.Recv(t, f.prompted, "the second prompt's POST")
	f.mu.Lock()
	gets := f.sessionGET
	f.mu.Unlock()
	if gets != 2 {
		t.Fatalf("%d GETs of the session's stream, want it opened again", gets)
	}
	if err := conn.Err(); err != nil {
		t.Fatalf("the Conn ended with a session's stream: %v", err)
	}
}
