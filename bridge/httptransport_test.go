package bridge

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/acptest"
)

// An agent served over Streamable HTTP whose connections drop (the network
// cut under its streams) is reported as exited with the endpoint named,
// and the session's next prompt reconnects and resumes the same native
// session.
func TestHTTPAgentReconnectsAndResumes(t *testing.T) {
	agent := &acptest.Transport{Script: acptest.Script{
		NewSession:  acptest.NewSessionScript{SessionIDs: []string{"sess_H"}},
		LoadSession: acptest.LoadSessionScript{Sessions: []string{"sess_H"}},
		Prompts:     []acptest.Turn{{Steps: []acptest.Step{{Text: "served"}}}},
	}}
	var mu sync.Mutex
	var conns []net.Conn
	srv := httptest.NewUnstartedServer(agent)
	srv.Config.ConnState = func(c net.Conn, s http.ConnState) {
		if s == http.StateNew {
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}
	srv.Start()
	// Closed after the host (cleanups run last first): the server waits
	// for the streams of the connection the host still holds.
	t.Cleanup(srv.Close)

	h, rec := newHostAndRecorder(t, nil)
	url := srv.URL + "/acp"
	b, err := h.Start(ctxT(t), Config{ID: "http", Transport: &acpclient.HTTPTransport{URL: url}})
	if err != nil {
		t.Fatal(err)
	}
	s, err := b.OpenSession(ctxT(t), SessionConfig{Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	if stop, err := s.Prompt(ctxT(t), acpclient.TextBlock("one")); err != nil || stop != acpclient.StopEndTurn {
		t.Fatalf("first prompt: %q %v", stop, err)
	}

	mu.Lock()
	for _, c := range conns {
		c.Close()
	}
	mu.Unlock()
	exited := rec.waitFor("the agent reported exited after the drop", func(ev Event) bool { return ev.Kind == KindExited })
	if exited.Err == nil || !strings.Contains(exited.Err.Error(), url) {
		t.Errorf("exit after the drop: %v, want the endpoint named", exited.Err)
	}

	if stop, err := s.Prompt(ctxT(t), acpclient.TextBlock("two")); err != nil || stop != acpclient.StopEndTurn {
		t.Fatalf("prompt after the drop: %q %v", stop, err)
	}
	agents := agent.Agents()
	if len(agents) != 2 {
		t.Fatalf("%d connections served, want the first and the reconnection", len(agents))
	}
	if _, err := agents[1].WaitFor(ctxT(t), acptest.Method("session/load")); err != nil {
		t.Fatalf("the reconnection did not resume the session: %v", err)
	}
	rec.waitFor("the second turn's end", func(ev Event) bool { return ev.Kind == KindTurnEnd && ev.Turn == 2 })
	var readies []Event
	for _, ev := range rec.of("http", "sess_H") {
		if ev.Kind == KindSession {
			readies = append(readies, ev)
		}
	}
	if len(readies) != 2 {
		t.Fatalf("%d session events, want the first and the one after reconnecting:\n%s", len(readies), rec.summary())
	}
	if ready := readies[1]; !ready.SessionReady.Resumed || ready.SessionReady.Replaced != "" {
		t.Errorf("after reconnecting: %+v, want the native session resumed", ready.SessionReady)
	}
}
