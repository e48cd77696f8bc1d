package bridge

import (
	"bytes"

	"github.com/acphost/acphost/acpclient"
)

// carriedKeys are, per update kind the bridge maps in full, the keys of the
// update object whose content its event carries in typed fields. An update
// with only these keys gets no Raw: it would repeat the event (for tool
// calls, whose rawOutput often repeats their content, Raw was over a third
// of a tool-heavy stream). Any other key (a _meta the event does not keep,
// a vendor's extra field) keeps Raw, so nothing the agent sent is lost.
// Only top-level keys are checked: a cheap test, one pass over the bytes.
var carriedKeys = map[string][]string{
	acpclient.UpdateToolCall:          toolCallKeys,
	acpclient.UpdateToolCallUpdate:    toolCallKeys,
	acpclient.UpdatePlan:              {"sessionUpdate", "entries"},
	acpclient.UpdatePlanContent:       {"sessionUpdate", "plan"},
	acpclient.UpdatePlanRemoved:       {"sessionUpdate", "planId"},
	acpclient.UpdateNotice:            {"sessionUpdate", "severity", "title", "description", "_meta"},
	acpclient.UpdateAvailableCommands: {"sessionUpdate", "availableCommands"},
	acpclient.UpdateCurrentMode:       {"sessionUpdate", "currentModeId", "modeId"},
	acpclient.UpdateConfigOptions:     {"sessionUpdate", "configOptions"},
	acpclient.UpdateSessionInfo:       {"sessionUpdate", "title", "updatedAt"},
	acpclient.UpdateUsage:             {"sessionUpdate", "used", "size", "cost"},
	acpclient.UpdateCompaction:        {"sessionUpdate", "compactionId", "status", "summary"},
	// A terminal's command and cwd are not in its events: they keep Raw.
	acpclient.UpdateTerminalOutputChunk: {"sessionUpdate", "terminalId", "data"},
	acpclient.UpdateTerminal:            {"sessionUpdate", "terminalId", "output", "exitStatus"},
}

// toolCallKeys are the keys of a tool call the ToolCall snapshot keeps (its
// _meta included: Meta holds the latest one).
var toolCallKeys = []string{"sessionUpdate", "toolCallId", "title", "kind", "status", "content",
	"locations", "rawInput", "rawOutput", "name", "_meta"}

// rawBeyondEvent returns raw, the update as the agent sent it, when it
// carries something its event's typed fields do not, and nil when the
// event says it all.
func rawBeyondEvent(u acpclient.SessionUpdate, raw []byte) []byte {
	if _, unknown := u.(*acpclient.UnknownUpdate); unknown {
		return raw
	}
	known, mapped := carriedKeys[u.Kind()]
	if mapped && onlyKeys(raw, known) {
		return nil
	}
	return raw
}

// onlyKeys reports whether raw is a JSON object whose top-level keys are
// all in known. Keys with escapes count as unknown; anything that is not a
// well-formed object reports false, which keeps Raw.
func onlyKeys(raw []byte, known []string) bool {
	raw = bytes.TrimSpace(raw)
	if len(raw) < 2 || raw[0] != '{' {
		return false
	}
	depth, expectKey := 0, false
	for i := 0; i < len(raw); i++ {
		switch raw[i] {
		case '"':
			end := stringEnd(raw, i)
			if end < 0 {
				return false
			}
			if depth == 1 && expectKey {
				if !isKnownKey(raw[i+1:end-1], known) {
					return false
				}
				expectKey = false
			}
			i = end - 1
		case '{', '[':
			depth++
			expectKey = depth == 1
		case '}', ']':
			depth--
		case ',':
			expectKey = depth == 1
		}
	}
	return depth == 0
}

// stringEnd returns the index just past the JSON string starting at the
// quote raw[start], or -1 when it does not end.
func stringEnd(raw []byte, start int) int {
	for i := start + 1; i < len(raw); {
		j := bytes.IndexAny(raw[i:], `"\`)
		if j < 0 {
			return -1
		}
		i += j
		if raw[i] == '"' {
			return i + 1
		}
		i += 2 // an escape and the byte it escapes
	}
	return -1
}

func isKnownKey(key []byte, known []string) bool {
	for _, k := range known {
		if string(key) == k {
			return true
		}
	}
	return false
}
