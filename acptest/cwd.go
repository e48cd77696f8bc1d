package acptest

import (
	"encoding/json"
	"strings"
)

// CwdToken stands for the session's working directory in a step: Update's
// JSON, ReadFile.Path and WriteFile.Path may hold it, and the step sends
// the cwd its session was created, loaded or resumed with instead. A
// script can so act in the session's workspace, whichever it is.
const CwdToken = "{{session.cwd}}"

// sessionCwd returns the cwd a session was opened with ("" if unknown).
func (c *conn) sessionCwd(session string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sessions[session]
}

// expandPath replaces CwdToken in a path with the session's cwd.
func (c *conn) expandPath(session, path string) string {
	if !strings.Contains(path, CwdToken) {
		return path
	}
	return strings.ReplaceAll(path, CwdToken, c.sessionCwd(session))
}

// expandJSON replaces CwdToken in JSON text with the session's cwd,
// escaped as a JSON string's content.
func (c *conn) expandJSON(session string, raw json.RawMessage) json.RawMessage {
	if !strings.Contains(string(raw), CwdToken) {
		return raw
	}
	quoted, _ := json.Marshal(c.sessionCwd(session)) // a string: cannot fail
	inner := string(quoted[1 : len(quoted)-1])
	return json.RawMessage(strings.ReplaceAll(string(raw), CwdToken, inner))
}
