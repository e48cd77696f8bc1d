package acptest

import (
	"encoding/json"
)

// session/fork (unstable): the agent forks a session it knows into a new
// one, when its capabilities (Initialize.AgentCapabilities, as sent)
// advertise sessionCapabilities.fork; otherwise the method is unknown to
// it, as to an agent without forks. The fork gets the next session id, as
// session/new would hand out, and NewSession's modes, config options and
// models; it can then be prompted, listed, loaded and resumed like any
// session.

// advertisesFork reports whether the initialize result advertises
// session/fork.
func (c *conn) advertisesFork() bool {
	var caps struct {
		SessionCapabilities struct {
			Fork json.RawMessage `json:"fork"`
		} `json:"sessionCapabilities"`
	}
	if json.Unmarshal(c.initializeResult().AgentCapabilities, &caps) != nil {
		return false
	}
	f := caps.SessionCapabilities.Fork
	return len(f) > 0 && string(f) != "null"
}

// fork answers session/fork: the new session's id and result, or the
// error an agent gives.
func (c *conn) fork(params json.RawMessage) (string, any, *Error) {
	if !c.advertisesFork() {
		return "", nil, &Error{Code: -32601, Message: "Method not found", Data: mustJSON(map[string]string{"method": "session/fork"})}
	}
	var p struct {
		SessionID string `json:"sessionId"`
		Cwd       string `json:"cwd"`
	}
	if err := json.Unmarshal(params, &p); err != nil || p.SessionID == "" || p.Cwd == "" {
		return "", nil, &Error{Code: -32602, Message: "Invalid params: sessionId and cwd are required"}
	}
	if !c.knownSession(p.SessionID) {
		return "", nil, &Error{Code: -32002, Message: "Resource not found", Data: mustJSON(map[string]string{"sessionId": p.SessionID})}
	}
	id := c.newSessionID(p.Cwd)
	ns := c.script.NewSession
	return id, sessionResult{SessionID: id, Modes: ns.Modes, ConfigOptions: ns.ConfigOptions, Models: ns.Models}, nil
}
