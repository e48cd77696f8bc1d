package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/acphost/acphost/acptest"
	"github.com/acphost/acphost/bridge"
	"github.com/acphost/acphost/journal"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// testServer is a server on a free port with a fresh journal and
// workspace, closed when the test ends.
type testServer struct {
	*server
	base string // http://127.0.0.1:port
	cwd  string
	db   string // the journal's path
	// stop closes the server and its journal, once.
	stop func() error
}

// startServer starts a server of the agents, the demo agent when none
// are given, in a fresh workspace with a fresh journal.
func startServer(t *testing.T, specs ...agentSpec) *testServer {
	t.Helper()
	dir := t.TempDir()
	cwd := dir + "/ws"
	if err := os.Mkdir(cwd, 0o755); err != nil {
		t.Fatal(err)
	}
	return startServerIn(t, cwd, dir+"/journal.db", specs...)
}

func startServerIn(t *testing.T, cwd, dbPath string, specs ...agentSpec) *testServer {
	t.Helper()
	return startServerWith(t, cwd, dbPath, false, specs...)
}

// startServerWith starts a server in cwd with the journal at dbPath, with
// terminals offered to the agents or not.
func startServerWith(t *testing.T, cwd, dbPath string, terminals bool, specs ...agentSpec) *testServer {
	t.Helper()
	return startServerOn(t, &workspace{cwd: cwd}, dbPath, terminals, specs...)
}

// startServerOn starts a server for a workspace, local or remote.
func startServerOn(t *testing.T, ws *workspace, dbPath string, terminals bool, specs ...agentSpec) *testServer {
	t.Helper()
	if len(specs) == 0 {
		specs = []agentSpec{{Name: "demo"}}
	}
	return startServerConfig(t, dbPath, serverConfig{Agents: specs, Workspace: ws, Terminals: terminals})
}

// startServerConfig starts a server with cfg, its journal at dbPath and
// the tests' short waits.
func startServerConfig(t *testing.T, dbPath string, cfg serverConfig) *testServer {
	t.Helper()
	cwd := cfg.Workspace.cwd
	db, err := journal.Open(context.Background(), dbPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Journal, cfg.DemoPace, cfg.StartTimeout, cfg.RequestWait, cfg.Log = db, time.Millisecond, 30*time.Second, 300*time.Millisecond, testLog{t}
	srv, err := newServer(context.Background(), cfg)
	if err != nil {
		db.Close()
		t.Fatal(err)
	}
	ts := &testServer{server: srv, base: "http://" + srv.ln.Addr().String(), cwd: cwd, db: dbPath}
	ts.stop = sync.OnceValue(func() error {
		err := srv.Close()
		if cerr := db.Close(); err == nil {
			err = cerr
		}
		return err
	})
	t.Cleanup(func() {
		if err := ts.stop(); err != nil {
			t.Errorf("closing the server: %v", err)
		}
	})
	ts.waitAgents(t)
	return ts
}

// testLog sends the server's log to the test's.
type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// waitAgents waits until no agent is starting.
func (ts *testServer) waitAgents(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		starting := false
		for _, a := range ts.agents {
			if b, err := a.state(); b == nil && err == nil {
				starting = true
			}
		}
		if !starting {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatal("agents still starting")
}

// do sends a request with the token as a Bearer header; body, when not
// nil, is sent as JSON.
func (ts *testServer) do(t *testing.T, method, path string, body any) *http.Response {
	t.Helper()
	var r io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		r = strings.NewReader(string(data))
	}
	req, err := http.NewRequest(method, ts.base+path, r)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+ts.token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// call sends a request and decodes the JSON answer, which must have the
// status want.
func (ts *testServer) call(t *testing.T, method, path string, body any, want int, out any) {
	t.Helper()
	resp := ts.do(t, method, path, body)
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		t.Fatalf("%s %s: status %d %s, want %d", method, path, resp.StatusCode, data, want)
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			t.Fatalf("%s %s: %v in %s", method, path, err, data)
		}
	}
}

// newSession starts a session of the agent and returns its key.
func (ts *testServer) newSession(t *testing.T, agent string) string {
	t.Helper()
	var got struct{ Key string }
	ts.call(t, "POST", "/api/sessions", map[string]string{"agent": agent}, http.StatusOK, &got)
	return got.Key
}

// sseFrame is one Server-Sent Event.
type sseFrame struct {
	ID, Event, Data, Retry string
}

// sseStream reads the frames of an event stream.
type sseStream struct {
	resp   *http.Response
	frames chan sseFrame
	cancel context.CancelFunc
}

// stream opens /api/events with the query and headers given.
func (ts *testServer) stream(t *testing.T, query string, header http.Header) *sseStream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, "GET", ts.base+"/api/events"+query, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	req.Header.Set("Authorization", "Bearer "+ts.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	s := &sseStream{resp: resp, frames: make(chan sseFrame, 1024), cancel: cancel}
	go s.read()
	t.Cleanup(s.close)
	return s
}

func (s *sseStream) close() {
	s.cancel()
	s.resp.Body.Close()
	for range s.frames {
	}
}

func (s *sseStream) read() {
	defer close(s.frames)
	sc := bufio.NewScanner(s.resp.Body)
	sc.Buffer(nil, 8<<20)
	var f sseFrame
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			s.frames <- f
			f = sseFrame{}
			continue
		}
		field, value, _ := strings.Cut(line, ": ")
		switch field {
		case "id":
			f.ID = value
		case "event":
			f.Event = value
		case "data":
			f.Data += value
		case "retry":
			f.Retry = value
		}
	}
}

// next returns the next frame, failing the test after a while.
func (s *sseStream) next(t *testing.T) sseFrame {
	t.Helper()
	select {
	case f, ok := <-s.frames:
		if !ok {
			t.Fatal("the event stream ended")
		}
		return f
	case <-time.After(20 * time.Second):
		t.Fatal("no event within 20s")
	}
	return sseFrame{}
}

// nextEvent returns the next event frame and its event, checking the
// framing: the id is the event's Pos, the data its JSON.
func (s *sseStream) nextEvent(t *testing.T) bridge.Event {
	t.Helper()
	for {
		f := s.next(t)
		if f.Event != "" {
			if f.Event == "failure" {
				t.Fatalf("stream failure: %s", f.Data)
			}
			continue
		}
		var ev bridge.Event
		if err := json.Unmarshal([]byte(f.Data), &ev); err != nil {
			t.Fatalf("event data %q: %v", f.Data, err)
		}
		if f.ID != fmt.Sprint(ev.Pos) {
			t.Fatalf("frame id %q for the event at pos %d", f.ID, ev.Pos)
		}
		return ev
	}
}

// until reads events until one matches, and returns it.
func (s *sseStream) until(t *testing.T, match func(bridge.Event) bool) bridge.Event {
	t.Helper()
	for {
		if ev := s.nextEvent(t); match(ev) {
			return ev
		}
	}
}

// fakeAgent is the fake agent binary as an agent of the server, running
// script, with a fresh HOME and a minimal environment.
func fakeAgent(t *testing.T, name string, script acptest.Script) agentSpec {
	t.Helper()
	home := t.TempDir()
	return agentSpec{Name: name, Argv: []string{acptest.BuildBinary(t), "-script", acptest.WriteScript(t, script)},
		Env: []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "TMPDIR=" + os.TempDir()}}
}

func kind(k bridge.Kind) func(bridge.Event) bool {
	return func(ev bridge.Event) bool { return ev.Kind == k }
}
