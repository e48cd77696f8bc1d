package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/acphost/acphost/bridge"
)

// TestEventsNameTheAgentMode: --events reports the agent's own mode as
// kind agent_mode with key agentMode, and the bridge id under bridge, so
// neither is mistaken for the host's --mode or the agent's name.
func TestEventsNameTheAgentMode(t *testing.T) {
	line, err := json.Marshal(convert(bridge.Event{Bridge: "agent-1", Session: "s", Kind: bridge.KindAgentMode, AgentMode: "code"}))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"bridge":"agent-1"`, `"kind":"agent_mode"`, `"agentMode":"code"`} {
		if !strings.Contains(string(line), want) {
			t.Errorf("--events line %s lacks %s", line, want)
		}
	}
}
