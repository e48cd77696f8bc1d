package acpclient

import (
	"bytes"
	"encoding/json"

	jsonv2 "github.com/go-json-experiment/json"
)

// A replayed session is mostly tool calls and their updates, whose diffs and
// content make up most of the bytes. The general path decodes such a line
// level by level (envelope, params, update head, variant, each content item,
// each content block), encoding/json validating the same bytes again at each
// level. toolLine decodes the whole line in one pass of
// github.com/go-json-experiment/json (encoding/json/v2) in its strict mode:
// names matched exactly, no unknown or duplicate names, valid UTF-8, every
// value of its field's type. A line that passes all that means the same to
// encoding/json, so the result is what the general path gives; any other
// line (and any id, result or error, another update kind, a content type the
// general path keeps raw) is declined and takes the general path.
//
// Measured on the lines of BenchmarkReplay, decoding only (with the raw
// update of the tool lines, as the bridge takes it), medians of 5 runs: with
// encoding/json in one pass over each tool line instead, the replay took 1.6
// times as long, and with the level-by-level path 3.2 times. For plain text
// chunks the hand-written scanner (internal/wire/scan) is still the faster.

// toolLine is a whole tool_call or tool_call_update notification line.
type toolLine struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  struct {
		SessionID string           `json:"sessionId"`
		Update    toolUpdateFields `json:"update"`
		Meta      json.RawMessage  `json:"_meta"`
	} `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

// toolUpdateFields has the fields of both ToolCall and ToolCallUpdate. The
// string fields are pointers as in ToolCallUpdate: encoding/json leaves a
// pointer to "" for a value of the wrong type, so dereferencing gives what
// ToolCall's plain strings hold.
type toolUpdateFields struct {
	SessionUpdate string              `json:"sessionUpdate"`
	ToolCallID    string              `json:"toolCallId"`
	Title         *string             `json:"title"`
	Kind          *string             `json:"kind"`
	Status        *string             `json:"status"`
	Content       []toolContentFields `json:"content"`
	Locations     []ToolCallLocation  `json:"locations"`
	RawInput      json.RawMessage     `json:"rawInput"`
	RawOutput     json.RawMessage     `json:"rawOutput"`
	Name          *string             `json:"name"`
	Meta          json.RawMessage     `json:"_meta"`
}

// toolContentFields is ToolCallContent without its UnmarshalJSON, whose
// block is decoded in place too.
type toolContentFields struct {
	Type       string              `json:"type"`
	Content    *contentBlockFields `json:"content"`
	Path       string              `json:"path"`
	OldText    *string             `json:"oldText"`
	NewText    string              `json:"newText"`
	TerminalID string              `json:"terminalId"`
	Meta       json.RawMessage     `json:"_meta"`
}

var toolCallMark = []byte(`"tool_call`)

// toolLineStrict adds to the library's defaults (exact names, no duplicate
// names, valid UTF-8) the refusal of unknown names, which encoding/json
// might match to a field by folding case.
var toolLineStrict = jsonv2.RejectUnknownMembers(true)

// decodeToolLine decodes line if it is a tool_call or tool_call_update
// notification the single pass decodes exactly, and returns nil otherwise.
// owned says the line is the caller's to keep, so it need not be copied.
func decodeToolLine(line []byte, owned bool) *inbound {
	if !bytes.Contains(line, toolCallMark) {
		return nil
	}
	var m toolLine
	if jsonv2.Unmarshal(line, &m, toolLineStrict) != nil {
		return nil
	}
	u := &m.Params.Update
	if m.JSONRPC != "2.0" || m.ID != nil || m.Method != methodSessionUpdate || m.Result != nil || m.Error != nil {
		return nil
	}
	content, ok := toolContent(u.Content)
	if !ok {
		return nil
	}
	var update SessionUpdate
	switch u.SessionUpdate {
	case UpdateToolCall:
		update = &ToolCallStart{ToolCall{ToolCallID: u.ToolCallID, Title: deref(u.Title), Kind: deref(u.Kind),
			Status: deref(u.Status), Content: content, Locations: u.Locations, RawInput: u.RawInput,
			RawOutput: u.RawOutput, Name: deref(u.Name), Meta: u.Meta}}
	case UpdateToolCallUpdate:
		update = &ToolCallProgress{ToolCallUpdate{ToolCallID: u.ToolCallID, Title: u.Title, Kind: u.Kind,
			Status: u.Status, Content: content, Locations: u.Locations, RawInput: u.RawInput,
			RawOutput: u.RawOutput, Name: u.Name, Meta: u.Meta}}
	default:
		return nil
	}
	if !owned {
		line = bytes.Clone(line)
	}
	n := &SessionNotification{SessionID: m.Params.SessionID, Meta: m.Params.Meta, Update: update}
	return &inbound{method: methodSessionUpdate, update: n, size: queuedSize(len(line), true), src: rawSource{raw: line, inLine: true}}
}

// toolContent converts decoded content items, refusing any of a type the
// general path would keep raw.
func toolContent(in []toolContentFields) ([]ToolCallContent, bool) {
	if in == nil {
		return nil, true
	}
	out := make([]ToolCallContent, len(in))
	for i, f := range in {
		switch f.Type {
		case ToolContentContent, ToolContentDiff, ToolContentTerminal:
		default:
			return nil, false
		}
		if f.Content != nil && !knownContentType(f.Content.Type) {
			return nil, false
		}
		out[i] = ToolCallContent{Type: f.Type, Content: (*ContentBlock)(f.Content), Path: f.Path, OldText: f.OldText,
			NewText: f.NewText, TerminalID: f.TerminalID, Meta: f.Meta}
	}
	return out, true
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
