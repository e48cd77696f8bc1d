package main

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acphost/acphost/acptest"
)

// TestSignInTakesDeclaredVariablesOnly checks that a sign-in answer with
// a variable its env_var method did not declare is refused, naming it,
// and that the restarted agent's process never gets it.
func TestSignInTakesDeclaredVariablesOnly(t *testing.T) {
	script := acptest.Script{
		Initialize: acptest.InitializeScript{AuthMethods: []byte(`[{"id":"apikey","name":"API key","type":"env_var","vars":[{"name":"DEMO_API_KEY","secret":true}]}]`)},
		NewSession: acptest.NewSessionScript{RequireAuth: "apikey", SessionIDs: []string{"sess_env"}},
	}
	spec := fakeAgent(t, "envy", script)
	ts := startServer(t, spec)
	opened := make(chan int, 1)
	go func() {
		resp := ts.do(t, "POST", "/api/sessions", map[string]string{"agent": "envy"})
		resp.Body.Close()
		opened <- resp.StatusCode
	}()
	var id string
	ts.waitFor(t, func() bool {
		for _, p := range ts.host.Snapshot().Pending {
			if p.Type == "auth" && p.Bridge == "envy" {
				id = p.ID
				return true
			}
		}
		return false
	})
	answer := func(env map[string]string) (int, string) {
		resp := ts.do(t, "POST", "/api/auth", map[string]any{"agent": "envy", "id": id, "method": "apikey", "env": env})
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	code, body := answer(map[string]string{"DEMO_API_KEY": "k1", "BASH_ENV": "/tmp/evil", "ACPHOST_INJECTED": "yes"})
	if code != http.StatusBadRequest || !strings.Contains(body, "BASH_ENV") || !strings.Contains(body, "ACPHOST_INJECTED") {
		t.Fatalf("answer with undeclared variables: %d %s, want 400 naming them", code, body)
	}
	if code, body := answer(map[string]string{"DEMO_API_KEY": "k1"}); code != http.StatusOK {
		t.Fatalf("answer with the declared variable: %d %s", code, body)
	}
	select {
	case code := <-opened:
		if code != http.StatusOK {
			t.Fatalf("the session after signing in: %d", code)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the session did not open after signing in")
	}
	env := agentEnviron(t, spec.Argv[len(spec.Argv)-1])
	if !strings.Contains(env, "\x00DEMO_API_KEY=k1\x00") {
		t.Errorf("the agent lacks the declared variable: %q", env)
	}
	for _, v := range []string{"BASH_ENV=", "ACPHOST_INJECTED="} {
		if strings.Contains(env, v) {
			t.Errorf("the agent got %s from the page: %q", v, env)
		}
	}
}

// agentEnviron returns /proc/PID/environ of the one running process whose
// command line mentions marker.
func agentEnviron(t *testing.T, marker string) string {
	t.Helper()
	pids := processesWith(t, marker)
	if len(pids) != 1 {
		t.Fatalf("processes of the agent: %v, want one", pids)
	}
	data, err := os.ReadFile(filepath.Join("/proc", pids[0], "environ"))
	if err != nil {
		t.Fatal(err)
	}
	return "\x00" + string(data)
}
