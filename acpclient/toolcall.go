package acpclient

import "encoding/json"

// Tool kinds (ToolCall.Kind). Agents may send others; they are kept as sent.
const (
	ToolKindRead       = "read"
	ToolKindEdit       = "edit"
	ToolKindDelete     = "delete"
	ToolKindMove       = "move"
	ToolKindSearch     = "search"
	ToolKindExecute    = "execute"
	ToolKindThink      = "think"
	ToolKindFetch      = "fetch"
	ToolKindSwitchMode = "switch_mode"
	ToolKindOther      = "other"
)

// Tool call statuses (ToolCall.Status).
const (
	ToolStatusPending    = "pending"
	ToolStatusInProgress = "in_progress"
	ToolStatusCompleted  = "completed"
	ToolStatusFailed     = "failed"
)

// ToolCall announces a tool call (the "tool_call" session update).
type ToolCall struct {
	ToolCallID string             `json:"toolCallId"`
	Title      string             `json:"title"`
	Kind       string             `json:"kind,omitempty"`
	Status     string             `json:"status,omitempty"`
	Content    []ToolCallContent  `json:"content,omitempty"`
	Locations  []ToolCallLocation `json:"locations,omitempty"`
	RawInput   json.RawMessage    `json:"rawInput,omitempty"`
	RawOutput  json.RawMessage    `json:"rawOutput,omitempty"`
	// Name is the machine name of the tool. It is not in the stable schema,
	// but shipped agents send it.
	Name string          `json:"name,omitempty"`
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// ToolCallUpdate patches a tool call (the "tool_call_update" session update,
// and the tool call of a permission request). Nil fields are unchanged;
// Content and Locations, when non-nil, replace the stored lists.
type ToolCallUpdate struct {
	ToolCallID string             `json:"toolCallId"`
	Title      *string            `json:"title,omitempty"`
	Kind       *string            `json:"kind,omitempty"`
	Status     *string            `json:"status,omitempty"`
	Content    []ToolCallContent  `json:"content,omitempty"`
	Locations  []ToolCallLocation `json:"locations,omitempty"`
	RawInput   json.RawMessage    `json:"rawInput,omitempty"`
	RawOutput  json.RawMessage    `json:"rawOutput,omitempty"`
	Name       *string            `json:"name,omitempty"`
	Meta       json.RawMessage    `json:"_meta,omitempty"`
}

// Tool call content types (ToolCallContent.Type).
const (
	ToolContentContent  = "content"
	ToolContentDiff     = "diff"
	ToolContentTerminal = "terminal"
)

// ToolCallContent is what a tool call produced: a content block, a diff or a
// live terminal. Like ContentBlock it is one flat struct; Type says which
// fields apply, and an unknown type keeps its JSON in Raw.
type ToolCallContent struct {
	Type       string          `json:"type"`
	Content    *ContentBlock   `json:"content,omitempty"`    // content
	Path       string          `json:"path,omitempty"`       // diff: absolute path
	OldText    *string         `json:"oldText,omitempty"`    // diff: nil for a new file
	NewText    string          `json:"newText,omitempty"`    // diff
	TerminalID string          `json:"terminalId,omitempty"` // terminal
	Meta       json.RawMessage `json:"_meta,omitempty"`

	Raw json.RawMessage `json:"-"`
}

type toolCallContentFields ToolCallContent

// UnmarshalJSON decodes any tool call content; unknown types keep their JSON.
func (c *ToolCallContent) UnmarshalJSON(data []byte) error {
	var f toolCallContentFields
	if err := lenientUnmarshal(data, &f); err != nil {
		return err
	}
	*c = ToolCallContent(f)
	switch c.Type {
	case ToolContentContent, ToolContentDiff, ToolContentTerminal:
	default:
		c.Raw = append(json.RawMessage(nil), data...)
	}
	return nil
}

// MarshalJSON writes the fields of the content's type.
func (c ToolCallContent) MarshalJSON() ([]byte, error) {
	switch c.Type {
	case ToolContentDiff:
		return json.Marshal(struct {
			Type    string          `json:"type"`
			Path    string          `json:"path"`
			OldText *string         `json:"oldText,omitempty"`
			NewText string          `json:"newText"`
			Meta    json.RawMessage `json:"_meta,omitempty"`
		}{c.Type, c.Path, c.OldText, c.NewText, c.Meta})
	case ToolContentTerminal:
		return json.Marshal(struct {
			Type       string          `json:"type"`
			TerminalID string          `json:"terminalId"`
			Meta       json.RawMessage `json:"_meta,omitempty"`
		}{c.Type, c.TerminalID, c.Meta})
	case ToolContentContent:
		block := c.Content
		if block == nil {
			block = &ContentBlock{Type: ContentText}
		}
		return json.Marshal(struct {
			Type    string          `json:"type"`
			Content *ContentBlock   `json:"content"`
			Meta    json.RawMessage `json:"_meta,omitempty"`
		}{c.Type, block, c.Meta})
	}
	if len(c.Raw) > 0 {
		return c.Raw, nil
	}
	return json.Marshal(toolCallContentFields(c))
}

// ToolCallLocation is a file (and line, 1-based) a tool call touches.
type ToolCallLocation struct {
	Path string          `json:"path"`
	Line *int            `json:"line,omitempty"`
	Meta json.RawMessage `json:"_meta,omitempty"`
}
