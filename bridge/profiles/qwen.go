package profiles

import (
	"encoding/json"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/bridge"
)

// Qwen Code confirms a mode or model switch with notifications of its own
// instead of (or besides) the standard session/update: version 1 carries
// {v, sessionId, currentModeId} or {v, sessionId, currentModelId}. Some of
// its releases send the names with a leading underscore.
const (
	qwenModeUpdate  = "qwen/notify/session/mode-update"
	qwenModelUpdate = "qwen/notify/session/model-update"
)

// newQwenProvider returns Qwen Code's vendor hooks: its mode and model
// notifications become agent_mode and model events.
func newQwenProvider(*bridge.Launch) *bridge.Provider {
	return &bridge.Provider{Name: "qwen", Notification: qwenNotification}
}

// qwenNotification maps Qwen Code's mode and model notifications; other
// methods are left to the bridge (ext events).
func qwenNotification(method string, params json.RawMessage) (string, []bridge.Event, bool) {
	if len(method) > 0 && method[0] == '_' {
		method = method[1:]
	}
	if method != qwenModeUpdate && method != qwenModelUpdate {
		return "", nil, false
	}
	var p struct {
		SessionID      string `json:"sessionId"`
		CurrentModeID  string `json:"currentModeId"`
		CurrentModelID string `json:"currentModelId"`
	}
	if json.Unmarshal(params, &p) != nil || p.SessionID == "" {
		return "", nil, false
	}
	ev := bridge.Event{Raw: params}
	switch {
	case method == qwenModeUpdate && p.CurrentModeID != "":
		ev.Kind, ev.AgentMode = bridge.KindAgentMode, p.CurrentModeID
	case method == qwenModelUpdate && p.CurrentModelID != "":
		ev.Kind, ev.Models = bridge.KindModel, &acpclient.ModelState{CurrentModelID: p.CurrentModelID}
	default:
		return "", nil, false
	}
	return p.SessionID, []bridge.Event{ev}, true
}
