package main

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acphost/acphost/bridge/profiles"
)

// TestOversizeBodyIs413 checks that a body over the limit is refused as
// too large, not as malformed.
func TestOversizeBodyIs413(t *testing.T) {
	ts := startServer(t)
	resp := ts.do(t, "POST", "/api/sessions", map[string]string{"agent": strings.Repeat("x", maxBody+1)})
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("an oversize body: %d, want 413", resp.StatusCode)
	}
	ts.call(t, "POST", "/api/sessions", map[string]string{"agent": "nope"}, http.StatusNotFound, nil)
}

// TestNotInstalledHasAHint checks that a missing agent is listed with a
// short hint of what to do, the long error (where it was looked for) kept
// apart.
func TestNotInstalledHasAHint(t *testing.T) {
	claude, _ := profiles.Lookup("claude")
	empty := t.TempDir()
	ts := startServer(t, agentSpec{Name: "missing", Argv: []string{filepath.Join(empty, "no-such-agent")}},
		agentSpec{Name: "claude", Profile: claude, Env: []string{"PATH=" + empty, "HOME=" + empty}})
	var got struct{ Agents []agentStatus }
	ts.call(t, "GET", "/api/agents", nil, http.StatusOK, &got)
	for i, want := range []string{"Install no-such-agent, or", "Install " + claude.Title + " (" + claude.Binaries[0]} {
		st := got.Agents[i]
		if st.State != "not-installed" || st.Error == "" || !strings.HasPrefix(st.Hint, want) || strings.Contains(st.Hint, empty) {
			t.Errorf("the missing agent: %+v, want a hint starting %q", st, want)
		}
	}
}
