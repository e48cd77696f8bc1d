package main

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/acphost/acphost/acptest"
	"github.com/acphost/acphost/bridge"
	"github.com/acphost/acphost/examples/internal/demoagent"
	"github.com/acphost/acphost/internal/sshtest"
)

// TestReopenAfterRestart checks that a session outlives the server: after
// a restart on the same journal it is listed, its history replays from the
// journal before it is opened, and it opens again and runs a turn.
func TestReopenAfterRestart(t *testing.T) {
	dir := t.TempDir()
	cwd, dbPath := filepath.Join(dir, "ws"), filepath.Join(dir, "journal.db")
	if err := os.Mkdir(cwd, 0o755); err != nil {
		t.Fatal(err)
	}
	first := startServerIn(t, cwd, dbPath)
	key := first.newSession(t, "demo")
	s := first.stream(t, "?key="+key, nil)
	first.call(t, "POST", "/api/sessions/"+key+"/prompt", map[string]string{"text": "the first prompt"}, http.StatusAccepted, nil)
	perm := s.until(t, kind(bridge.KindPermission))
	first.call(t, "POST", "/api/sessions/"+key+"/permission", map[string]string{"id": perm.Permission.ID, "answer": "allow"}, http.StatusOK, nil)
	end := s.until(t, kind(bridge.KindTurnEnd))
	s.close()
	if err := first.stop(); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(cwd, demoagent.FileName))

	second := startServerIn(t, cwd, dbPath)
	var list struct{ Sessions []sessionItem }
	second.call(t, "GET", "/api/sessions", nil, http.StatusOK, &list)
	if len(list.Sessions) != 1 || list.Sessions[0].Key != key || list.Sessions[0].Open || !list.Sessions[0].Known ||
		list.Sessions[0].Title != "the first prompt" || list.Sessions[0].Turns != 1 {
		t.Fatalf("sessions after the restart: %+v", list.Sessions)
	}
	history := second.stream(t, "?key="+key, nil)
	if ev := history.until(t, kind(bridge.KindTurnStart)); ev.Text != "the first prompt" {
		t.Fatalf("replayed turn_start %+v", ev)
	}
	if ev := history.until(t, kind(bridge.KindTurnEnd)); ev.Pos != end.Pos {
		t.Fatalf("replayed turn_end at %d, want %d", ev.Pos, end.Pos)
	}
	second.call(t, "POST", "/api/sessions/"+key+"/prompt", map[string]string{"text": "x"}, http.StatusConflict, nil)
	second.call(t, "POST", "/api/sessions/"+key+"/open", struct{}{}, http.StatusOK, nil)
	second.call(t, "POST", "/api/sessions/"+key+"/prompt", map[string]string{"text": "after the restart"}, http.StatusAccepted, nil)
	perm = history.until(t, kind(bridge.KindPermission))
	if perm.Pos <= end.Pos || perm.Turn != 2 {
		t.Fatalf("the new turn's permission %+v, want after pos %d in turn 2", perm, end.Pos)
	}
	second.call(t, "POST", "/api/sessions/"+key+"/permission", map[string]string{"id": perm.Permission.ID, "answer": "allow"}, http.StatusOK, nil)
	history.until(t, kind(bridge.KindTurnEnd))
	if _, err := os.Stat(filepath.Join(cwd, demoagent.FileName)); err != nil {
		t.Fatalf("the resumed session's write: %v", err)
	}
	second.call(t, "POST", "/api/sessions/nokey/open", struct{}{}, http.StatusNotFound, nil)
}

// TestSessionControls checks the agent's own mode, its config options,
// compaction where the agent has none, and close, through the API; and
// that closing the server ends the agent's process.
func TestSessionControls(t *testing.T) {
	spec := fakeAgent(t, "fake", acptest.Script{NewSession: acptest.NewSessionScript{
		Modes:         []byte(`{"currentModeId":"code","availableModes":[{"id":"code","name":"Code"},{"id":"architect","name":"Architect"}]}`),
		ConfigOptions: []byte(`[{"id":"model","name":"Model","type":"select","currentValue":"m1","options":[{"value":"m1","name":"One"},{"value":"m2","name":"Two"}]}]`),
	}})
	script := spec.Argv[2]
	ts := startServer(t, spec)
	key := ts.newSession(t, "fake")
	s := ts.stream(t, "?key="+key, nil)
	s.until(t, kind(bridge.KindSession))

	var mode struct{ AgentMode string }
	ts.call(t, "POST", "/api/sessions/"+key+"/agent-mode", map[string]string{"mode": "architect"}, http.StatusOK, &mode)
	if ev := s.until(t, kind(bridge.KindAgentMode)); ev.AgentMode != "architect" || mode.AgentMode != "architect" {
		t.Fatalf("agent mode event %+v, answer %+v", ev, mode)
	}
	var cfg struct {
		ConfigOptions []struct{ ID, CurrentValue string }
	}
	ts.call(t, "POST", "/api/sessions/"+key+"/config", map[string]string{"id": "model", "value": "m2"}, http.StatusOK, &cfg)
	if len(cfg.ConfigOptions) != 1 || cfg.ConfigOptions[0].CurrentValue != "m2" {
		t.Fatalf("config options %+v", cfg.ConfigOptions)
	}
	ts.call(t, "POST", "/api/sessions/"+key+"/compact", struct{}{}, http.StatusNotImplemented, nil)

	ts.call(t, "POST", "/api/sessions/"+key+"/close", struct{}{}, http.StatusOK, nil)
	s.until(t, kind(bridge.KindSessionClosed))
	var st sessionItem
	ts.call(t, "GET", "/api/sessions/"+key, nil, http.StatusOK, &st)
	if st.Open {
		t.Fatalf("closed session %+v", st)
	}
	ts.call(t, "POST", "/api/sessions/"+key+"/cancel", struct{}{}, http.StatusConflict, nil)

	if len(processesWith(t, script)) == 0 {
		t.Fatal("no agent process found while the server runs")
	}
	if err := ts.stop(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(processesWith(t, script)) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("agent processes left after the server closed: %v", processesWith(t, script))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestSSHWorkspace runs an agent on an SSH host (the in-process server):
// it starts there and its file write goes over SFTP into the remote
// workspace.
func TestSSHWorkspace(t *testing.T) {
	server := sshtest.Start(t, nil)
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "remote.txt")
	ws, err := newWorkspace(&options{ssh: server.User + "@" + server.Addr, sshKey: server.UserKeyFile,
		knownHosts: server.KnownHostsFile, cwd: dir, agents: []string{"x"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	spec := fakeAgent(t, "remote", acptest.Script{Prompts: []acptest.Turn{{Steps: []acptest.Step{
		{WriteFile: &acptest.WriteFile{Path: file, Content: "over SFTP\n"}},
	}}}})
	spec.Env = nil // the remote shell's environment
	ts := startServerOn(t, ws, filepath.Join(t.TempDir(), "journal.db"), false, spec)
	key := ts.newSession(t, "remote")
	s := ts.stream(t, "?key="+key, nil)
	ts.call(t, "POST", "/api/sessions/"+key+"/prompt", map[string]string{"text": "write"}, http.StatusAccepted, nil)
	if ev := s.until(t, kind(bridge.KindTurnEnd)); ev.StopReason != "end_turn" {
		t.Fatalf("turn_end %+v", ev)
	}
	if got, err := os.ReadFile(file); err != nil || string(got) != "over SFTP\n" {
		t.Fatalf("remote.txt = %q, %v", got, err)
	}
	var agents struct {
		Cwd    string
		Remote bool
	}
	ts.call(t, "GET", "/api/agents", nil, http.StatusOK, &agents)
	if !agents.Remote || agents.Cwd != dir {
		t.Fatalf("agents %+v", agents)
	}
}
