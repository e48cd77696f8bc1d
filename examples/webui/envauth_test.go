package main

import (
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/acphost/acphost/acptest"
)

// TestEnvFlag checks --env as acprun has it: a local agent's minimal
// environment gets the names passed on and the values set, nothing else
// of the user's.
func TestEnvFlag(t *testing.T) {
	t.Setenv("WEBUI_TEST_PASSED", "passed")
	t.Setenv("WEBUI_TEST_OTHER", "other")
	o, err := parseArgs([]string{"--env", "WEBUI_TEST_PASSED", "--env", "WEBUI_TEST_SET=set", "--agent", "gemini --acp", "--auth", "gemini-api-key"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	specs, err := agentSpecs(o)
	if err != nil {
		t.Fatal(err)
	}
	env := specs[0].Env
	if !slices.Contains(env, "WEBUI_TEST_PASSED=passed") || !slices.Contains(env, "WEBUI_TEST_SET=set") || slices.Contains(env, "WEBUI_TEST_OTHER=other") {
		t.Errorf("agent environment %q", env)
	}
	if o.auth != "gemini-api-key" {
		t.Errorf("--auth: %q", o.auth)
	}
	if _, err := parseArgs([]string{"--env", "A*=1"}, io.Discard); err == nil {
		t.Error("--env A*=1 taken")
	}
}

// TestAuthFlagSignsIn checks that --auth answers an agent's sign-in
// request with that method, an env_var one's variable from webui's
// environment, so the session opens without the page.
func TestAuthFlagSignsIn(t *testing.T) {
	t.Setenv("WEBUI_TEST_KEY", "k-123")
	dir := t.TempDir()
	script := acptest.Script{
		Initialize: acptest.InitializeScript{AuthMethods: json.RawMessage(`[{"id":"key","name":"API key","type":"env_var","vars":[{"name":"WEBUI_TEST_KEY","secret":true}]}]`)},
		NewSession: acptest.NewSessionScript{RequireAuth: "key"},
	}
	ts := startServerConfig(t, filepath.Join(dir, "journal.db"), serverConfig{
		Agents: []agentSpec{fakeAgent(t, "keyed", script)}, Workspace: &workspace{cwd: dir}, Auth: "key"})
	if key := ts.newSession(t, "keyed"); key == "" {
		t.Fatal("no session")
	}
}

// TestWithheldKeyHint checks that an agent that fails to start while its
// minimal environment left out a key webui has is shown with a hint naming
// the variable and --env, and never its value.
func TestWithheldKeyHint(t *testing.T) {
	const value = "AIza-webui-secret"
	t.Setenv("GEMINI_API_KEY", value)
	dir := t.TempDir()
	exit := 3
	ts := startServerConfig(t, filepath.Join(dir, "journal.db"), serverConfig{
		Agents:    []agentSpec{fakeAgent(t, "keyless", acptest.Script{Initialize: acptest.InitializeScript{Steps: []acptest.Step{{Exit: &exit}}}})},
		Workspace: &workspace{cwd: dir}})
	resp := ts.do(t, "GET", "/api/agents", nil)
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("agents: %d %s", resp.StatusCode, data)
	}
	var got struct{ Agents []agentStatus }
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	a := got.Agents[0]
	if a.State != "failed" || !strings.Contains(a.Hint, "--env GEMINI_API_KEY") {
		t.Errorf("agent %+v, want failed with a hint of --env GEMINI_API_KEY", a)
	}
	if strings.Contains(string(data), value) {
		t.Errorf("the key's value is shown: %s", data)
	}
}
