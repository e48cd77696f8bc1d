package main

import (
	"net/http"
	"strings"
	"testing"

	"github.com/acphost/acphost/acptest"
	"github.com/acphost/acphost/bridge"
)

// TestCrashIsShownAndRecovered checks that an agent whose process dies
// in a turn is listed as crashed, with its exit status and the end of its
// stderr, not as merely stopped; that a new session starts it again; and
// that an agent closed on purpose is not called crashed.
func TestCrashIsShownAndRecovered(t *testing.T) {
	code := 3
	spec := fakeAgent(t, "crashy", acptest.Script{Prompts: []acptest.Turn{
		{Match: "crash", Steps: []acptest.Step{{Stderr: "fatal: out of luck"}, {Exit: &code}}},
		{Steps: []acptest.Step{{Text: "fine"}}},
	}})
	ts := startServer(t, spec)
	key := ts.newSession(t, "crashy")
	first := processesWith(t, spec.Argv[len(spec.Argv)-1])
	s := ts.stream(t, "?key="+key, nil)
	defer s.close()
	ts.call(t, "POST", "/api/sessions/"+key+"/prompt", map[string]string{"text": "crash now"}, http.StatusAccepted, nil)
	s.until(t, kind(bridge.KindTurnEnd))

	status := func() agentStatus {
		var got struct{ Agents []agentStatus }
		ts.call(t, "GET", "/api/agents", nil, http.StatusOK, &got)
		return got.Agents[0]
	}
	ts.waitFor(t, func() bool { return status().State != "running" })
	st := status()
	if st.State != "crashed" || st.Exit != "exit status 3" || !strings.Contains(st.Stderr, "fatal: out of luck") {
		t.Fatalf("the crashed agent: %+v, want crashed, exit status 3 and its stderr", st)
	}
	ts.newSession(t, "crashy")
	if st := status(); st.State != "running" || st.Exit != "" {
		t.Fatalf("after a new session: %+v, want running", st)
	}
	again := processesWith(t, spec.Argv[len(spec.Argv)-1])
	if len(again) != 1 || len(first) != 1 || again[0] == first[0] {
		t.Fatalf("agent processes before the crash %v, after the new session %v: want a new one", first, again)
	}
	b, _ := ts.agents[0].state()
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	ts.waitFor(t, func() bool { return status().State != "running" })
	ts.waitFor(t, func() bool { return status().State == "stopped" }) // its exited event may come a moment later
	if st := status(); st.Exit != "" || st.Stderr != "" {
		t.Fatalf("the agent closed on purpose: %+v", st)
	}
}
