package acptest_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/acphost/acphost/acptest"
)

// Each wire form of steering: the agent advertises it in initialize (or,
// for the vendor method, nothing), takes text sent into a running turn
// (reporting "steered: TEXT", then going on past WaitSteer), and refuses
// or defers text when no turn runs.
func TestSteeringWireForms(t *testing.T) {
	turn := acptest.Turn{Steps: []acptest.Step{{Text: "working"}, {WaitSteer: true}, {Text: "done"}}}
	for _, tc := range []struct {
		wire, method, params, advertised, result, idle string
	}{
		{acptest.SteerWireInject, "session/inject", `{"sessionId":%q,"mode":"steer","content":[{"type":"text","text":"use v2"}]}`,
			`"agentCapabilities":{"loadSession":true,"mcpCapabilities":{"http":false,"sse":false},"promptCapabilities":{"audio":false,"embeddedContext":true,"image":true},"sessionCapabilities":{"close":{},"inject":{"modes":["steer","queue"]},"list":{},"resume":{}}}`,
			`{"messageId":"inj_1"}`, "error -32602"},
		{acptest.SteerWireExtension, "_session/steering", `{"sessionId":%q,"prompt":[{"type":"text","text":"use v2"}],"_meta":{"steering":{"idleBehavior":"promptRequired"}}}`,
			`"_meta":{"steering":{"supported":true}}`, `{"outcome":"injected"}`, `{"outcome":"promptRequired","reason":"noRunningTurn"}`},
		{acptest.SteerWireFollowUp, "session/follow_up", `{"sessionId":%q,"message":"use v2"}`, "", `{}`, "error -32602"},
	} {
		t.Run(tc.wire, func(t *testing.T) {
			c := start(t, acptest.Script{Steering: acptest.SteeringScript{Wire: tc.wire}, Prompts: []acptest.Turn{turn}})
			var init json.RawMessage
			c.result(c.call("initialize", `{"protocolVersion":1,"clientCapabilities":{},"clientInfo":{"name":"t","version":"1"}}`), &init)
			if tc.advertised != "" && !containsJSON(init, tc.advertised) {
				t.Errorf("initialize result %s does not advertise %s", init, tc.advertised)
			}
			session := c.newSession()
			idle := c.call(tc.method, fmt.Sprintf(tc.params, session))
			if _, resp := c.until(idle); answerOf(resp) != tc.idle {
				t.Errorf("steering with no turn running: %s, want %s", answerOf(resp), tc.idle)
			}
			p := c.prompt(session, "go")
			c.untilText("working")
			steer := c.call(tc.method, fmt.Sprintf(tc.params, session))
			msgs, resp := c.until(steer)
			if answerOf(resp) != tc.result {
				t.Errorf("steering into the turn: %s, want %s", answerOf(resp), tc.result)
			}
			if got := texts(msgs); len(got) != 1 || got[0] != "steered: use v2" {
				t.Errorf("before the answer the agent said %q, want the steered text reported", got)
			}
			if stop, rest := c.stopReason(p); stop != "end_turn" || len(rest) != 1 || rest[0] != "done" {
				t.Errorf("the turn went on to %q, %q; want done, end_turn", rest, stop)
			}
		})
	}
}

// An agent that advertises steering and then fails it.
func TestSteeringError(t *testing.T) {
	c := start(t, acptest.Script{Steering: acptest.SteeringScript{Wire: acptest.SteerWireExtension,
		Error: &acptest.Error{Code: -32603, Message: "steering broke"}}})
	c.initialize()
	session := c.newSession()
	_, resp := c.until(c.call("_session/steering", fmt.Sprintf(`{"sessionId":%q,"prompt":[{"type":"text","text":"x"}]}`, session)))
	if answerOf(resp) != "error -32603" {
		t.Errorf("answer %s, want the scripted error", answerOf(resp))
	}
}

// answerOf is a response's result, or "error CODE".
func answerOf(m msg) string {
	if m.Error != nil {
		return fmt.Sprintf("error %d", m.Error.Code)
	}
	var v any
	json.Unmarshal(m.Result, &v)
	b, _ := json.Marshal(v)
	return string(b)
}

// containsJSON reports whether the object obj has the members of the
// object text member ("key":value, …), compared as JSON.
func containsJSON(obj json.RawMessage, member string) bool {
	var whole, part map[string]any
	if json.Unmarshal(obj, &whole) != nil || json.Unmarshal([]byte("{"+member+"}"), &part) != nil {
		return false
	}
	for k, v := range part {
		a, _ := json.Marshal(whole[k])
		b, _ := json.Marshal(v)
		if string(a) != string(b) {
			return false
		}
	}
	return true
}

// untilText reads messages until an agent_message_chunk with text.
func (c *client) untilText(text string) ([]msg, msg) {
	c.t.Helper()
	var before []msg
	for {
		m := c.next()
		if got, ok := chunkText(m); ok && got == text {
			return before, m
		}
		before = append(before, m)
	}
}
