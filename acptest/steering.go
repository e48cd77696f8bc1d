package acptest

import (
	"encoding/json"
	"strconv"
	"strings"
)

// Wire forms of steering (SteeringScript.Wire).
const (
	// SteerWireInject is the draft protocol's session/inject, advertised
	// as agentCapabilities.sessionCapabilities.inject {"modes":["steer",
	// "queue"]}; params {sessionId, mode, content}, result {messageId}.
	SteerWireInject = "inject"
	// SteerWireExtension is the _session/steering extension, advertised as
	// _meta.steering.supported in the initialize result; params
	// {sessionId, prompt, _meta.steering.idleBehavior}, result {outcome}:
	// "injected", or "promptRequired" with reason "noRunningTurn" when no
	// turn runs.
	SteerWireExtension = "extension"
	// SteerWireFollowUp is session/follow_up {sessionId, message}, a vendor
	// method no capability advertises (a profile knows it).
	SteerWireFollowUp = "follow_up"
)

// SteeringScript makes the agent offer a way to put text into its running
// turn, and take it: the text is reported as an agent_message_chunk
// "steered: TEXT" in the turn, and a WaitSteer step of the turn goes on.
// Steering a session with no running turn fails (-32602 "no running
// turn"), except that the extension answers promptRequired as its
// clients ask.
type SteeringScript struct {
	// Wire is SteerWireInject, SteerWireExtension or SteerWireFollowUp;
	// empty offers no steering.
	Wire string `json:"wire,omitempty"`
	// Error, if set, answers every steer with this error: an agent that
	// advertises steering and then fails it.
	Error *Error `json:"error,omitempty"`
}

// steerMethod is the method of the script's wire form, or "".
func (s SteeringScript) steerMethod() string {
	switch s.Wire {
	case SteerWireInject:
		return "session/inject"
	case SteerWireExtension:
		return "_session/steering"
	case SteerWireFollowUp:
		return "session/follow_up"
	}
	return ""
}

// advertise adds the script's advertisement to an initialize result.
func (s SteeringScript) advertise(r *initializeResult) {
	switch s.Wire {
	case SteerWireInject:
		r.AgentCapabilities = withKey(r.AgentCapabilities, func(caps map[string]any) {
			sc, _ := caps["sessionCapabilities"].(map[string]any)
			if sc == nil {
				sc = map[string]any{}
			}
			sc["inject"] = map[string]any{"modes": []string{"steer", "queue"}}
			caps["sessionCapabilities"] = sc
		})
	case SteerWireExtension:
		r.Meta = withKey(r.Meta, func(meta map[string]any) {
			meta["steering"] = map[string]any{"supported": true}
		})
	}
}

// withKey decodes a JSON object (empty: {}), lets set change it and
// encodes it again.
func withKey(obj json.RawMessage, set func(map[string]any)) json.RawMessage {
	m := map[string]any{}
	if len(obj) > 0 {
		if err := json.Unmarshal(obj, &m); err != nil {
			return obj // a script's deliberate junk stays as it is
		}
	}
	set(m)
	return mustJSON(m)
}

// handleSteer answers a steering request of the script's wire form and
// reports whether m was one.
func (c *conn) handleSteer(m Message, key string, cl *call) bool {
	st := c.script.Steering
	if method := st.steerMethod(); method == "" || m.Method != method {
		return false
	}
	var p struct {
		SessionID string `json:"sessionId"`
		Message   string `json:"message"`
		Content   []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		Prompt []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"prompt"`
	}
	json.Unmarshal(m.Params, &p)
	text := p.Message
	for _, b := range append(p.Content, p.Prompt...) {
		if b.Type == "text" {
			text += b.Text
		}
	}
	c.handlers.Add(1)
	go func() {
		defer c.handlers.Done()
		defer c.forget(key, cl)
		result, rpcErr, resume := c.steer(st, p.SessionID, text)
		// The answer goes out before the turn carries on, as an agent
		// answers once it has taken the text.
		c.respond(m.ID, result, rpcErr)
		resume()
	}()
	return true
}

// steer puts text into the session's running turn and returns the answer,
// and resume, which lets a WaitSteer step of the turn go on.
func (c *conn) steer(st SteeringScript, session, text string) (any, *Error, func()) {
	nothing := func() {}
	if st.Error != nil {
		return nil, st.Error, nothing
	}
	if strings.TrimSpace(text) == "" {
		return nil, &Error{Code: -32602, Message: "Invalid params: empty message"}, nothing
	}
	c.mu.Lock()
	turn := c.turns[session]
	c.mu.Unlock()
	if turn == nil || turn.isCancelled() {
		if st.Wire == SteerWireExtension {
			return map[string]string{"outcome": "promptRequired", "reason": "noRunningTurn"}, nil, nothing
		}
		return nil, &Error{Code: -32602, Message: "Invalid params: no running turn in session " + session}, nothing
	}
	if err := c.sendText(session, "steered: "+text); err != nil {
		return nil, &Error{Code: -32603, Message: err.Error()}, nothing
	}
	resume := func() {
		select {
		case turn.steered <- text:
		default: // nobody waits for it: the text was still taken
		}
	}
	switch st.Wire {
	case SteerWireInject:
		c.mu.Lock()
		c.injected++
		n := c.injected
		c.mu.Unlock()
		return map[string]string{"messageId": "inj_" + strconv.Itoa(n)}, nil, resume
	case SteerWireExtension:
		return map[string]string{"outcome": "injected"}, nil, resume
	}
	return nil, nil, resume
}
