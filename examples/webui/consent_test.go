package main

import (
	"net/http"
	"os"
	"testing"

	"github.com/acphost/acphost/acptest"
	"github.com/acphost/acphost/bridge"
	"github.com/acphost/acphost/bridge/profiles"
	"github.com/acphost/acphost/internal/fakebin"
)

// fakeOpenCode is the OpenCode profile on a fake opencode whose build
// agent acts unasked (no opencode.json asks), so in Build it needs the
// user's consent.
func fakeOpenCode(t *testing.T) agentSpec {
	t.Helper()
	bin := t.TempDir()
	fakebin.Install(t, bin, "opencode", acptest.Script{
		NewSession: acptest.NewSessionScript{ConfigOptions: []byte(`[{"id":"mode","name":"Session Mode","category":"mode","type":"select","currentValue":"build","options":[{"value":"build","name":"build"},{"value":"plan","name":"plan"}]}]`)},
		Prompts:    []acptest.Turn{{Steps: []acptest.Step{{Text: "done on my own"}}}},
	}, "")
	return agentSpec{Name: "opencode", Profile: profiles.OpenCode,
		Env: []string{"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH"), "HOME=" + t.TempDir(), "TMPDIR=" + os.TempDir()}}
}

// TestConsentEndpoint: POST /api/sessions/KEY/consent grants the session's
// consent and answers its authority, agent-autonomous and no longer
// blocked; the next prompt runs.
func TestConsentEndpoint(t *testing.T) {
	ts := startServer(t, fakeOpenCode(t))
	key := ts.newSession(t, "opencode")
	live := ts.stream(t, "?key="+key, nil)
	asked := live.until(t, func(ev bridge.Event) bool { return ev.Kind == bridge.KindAuthority && ev.Authority.ConsentNeeded })
	if asked.Authority.State != bridge.AuthorityAgentAutonomous || !asked.Authority.Blocked {
		t.Fatalf("authority before consent %+v", asked.Authority)
	}
	var st bridge.AuthorityState
	ts.call(t, "POST", "/api/sessions/"+key+"/consent", struct{}{}, http.StatusOK, &st)
	if st.State != bridge.AuthorityAgentAutonomous || st.Blocked || st.ConsentNeeded {
		t.Fatalf("authority after consent %+v", st)
	}
	ts.call(t, "POST", "/api/sessions/"+key+"/prompt", map[string]string{"text": "go"}, http.StatusAccepted, nil)
	if end := live.until(t, kind(bridge.KindTurnEnd)); end.StopReason != "end_turn" {
		t.Fatalf("turn ended %+v", end)
	}
	ts.call(t, "POST", "/api/sessions/nokey/consent", struct{}{}, http.StatusConflict, nil)
}
