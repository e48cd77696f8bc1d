package acptest_test

import (
	"encoding/json"
	"testing"

	"github.com/acphost/acphost/acptest"
)

// forkCapabilities are the default capabilities plus session/fork.
const forkCapabilities = `{"loadSession":true,"sessionCapabilities":{"list":{},"resume":{},"close":{},"fork":{}}}`

// An agent whose capabilities advertise session/fork forks a known session
// into a new one, which it can then prompt and load; an unknown session,
// or missing params, are refused as an agent refuses them.
func TestForkSession(t *testing.T) {
	c := start(t, acptest.Script{
		Initialize: acptest.InitializeScript{AgentCapabilities: json.RawMessage(forkCapabilities)},
		NewSession: acptest.NewSessionScript{Modes: json.RawMessage(`{"currentModeId":"code","availableModes":[{"id":"code","name":"Code"}]}`)},
	})
	c.initialize()
	parent := c.newSession()
	var r struct {
		SessionID string `json:"sessionId"`
		Modes     struct {
			CurrentModeID string `json:"currentModeId"`
		} `json:"modes"`
	}
	c.result(c.call("session/fork", `{"sessionId":"`+parent+`","cwd":"/tmp"}`), &r)
	if r.SessionID == "" || r.SessionID == parent || r.Modes.CurrentModeID != "code" {
		t.Fatalf("session/fork of %s answered %+v", parent, r)
	}
	if reason, _ := c.stopReason(c.prompt(r.SessionID, "hi")); reason != "end_turn" {
		t.Errorf("a prompt in the fork ended %q", reason)
	}
	c.result(c.call("session/load", `{"sessionId":"`+r.SessionID+`","cwd":"/tmp","mcpServers":[]}`), nil)

	for params, code := range map[string]int64{
		`{"sessionId":"nope","cwd":"/tmp"}`: -32002,
		`{"sessionId":"` + parent + `"}`:    -32602,
	} {
		if _, resp := c.until(c.call("session/fork", params)); resp.Error == nil || resp.Error.Code != code {
			t.Errorf("session/fork %s answered %s, want error %d", params, resp.line, code)
		}
	}
}

// An agent that does not advertise session/fork does not know the method.
func TestForkSessionNotAdvertised(t *testing.T) {
	c := start(t, acptest.Script{})
	c.initialize()
	parent := c.newSession()
	if _, resp := c.until(c.call("session/fork", `{"sessionId":"`+parent+`","cwd":"/tmp"}`)); resp.Error == nil || resp.Error.Code != -32601 {
		t.Fatalf("session/fork without the capability answered %s, want -32601", resp.line)
	}
}
