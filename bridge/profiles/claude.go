package profiles

import (
	"encoding/json"

	"github.com/acphost/acphost/bridge"
)

// newClaudeProvider reads claude-agent-acp's tool call metadata: the
// subagent link it stamps on every update a subagent makes.
func newClaudeProvider(*bridge.Launch) *bridge.Provider {
	return &bridge.Provider{Name: "claude", ToolParent: claudeToolParent}
}

// claudeToolParent is the Agent (Task) tool call a subagent's tool call
// runs under: _meta.claudeCode.parentToolUseId.
func claudeToolParent(meta json.RawMessage) string {
	var m struct {
		ClaudeCode struct {
			ParentToolUseID json.RawMessage `json:"parentToolUseId"`
		} `json:"claudeCode"`
	}
	if json.Unmarshal(meta, &m) != nil {
		return ""
	}
	var id string
	if json.Unmarshal(m.ClaudeCode.ParentToolUseID, &id) != nil {
		return "" // null or not a string: no parent
	}
	return id
}
