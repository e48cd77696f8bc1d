package acpclient

import (
	"bytes"
	"encoding/json"
)

// Session update kinds (the "sessionUpdate" discriminator).
const (
	UpdateUserMessageChunk       = "user_message_chunk"
	UpdateAgentMessageChunk      = "agent_message_chunk"
	UpdateAgentThoughtChunk      = "agent_thought_chunk"
	UpdateToolCall               = "tool_call"
	UpdateToolCallUpdate         = "tool_call_update"
	UpdatePlan                   = "plan"
	UpdateAvailableCommands      = "available_commands_update"
	UpdateCurrentMode            = "current_mode_update"
	UpdateConfigOptions          = "config_option_update"
	UpdateSessionInfo            = "session_info_update"
	UpdateUsage                  = "usage_update"
	UpdateCompaction             = "compaction_update"        // unstable
	UpdateCompactionSummaryChunk = "compaction_summary_chunk" // unstable
	UpdateNotice                 = "notice"                   // unstable
)

// SessionNotification is a "session/update" notification: one update for one
// session, in the order the agent sent it.
type SessionNotification struct {
	SessionID string
	Update    SessionUpdate
	Meta      json.RawMessage
}

// UnmarshalJSON decodes a session/update's params. It never fails on an
// unknown or malformed update: those become an *UnknownUpdate.
func (n *SessionNotification) UnmarshalJSON(data []byte) error {
	var p struct {
		SessionID string          `json:"sessionId"`
		Update    json.RawMessage `json:"update"`
		Meta      json.RawMessage `json:"_meta"`
	}
	if err := lenientUnmarshal(data, &p); err != nil {
		return err
	}
	n.SessionID, n.Meta = p.SessionID, p.Meta
	n.Update = decodeUpdate(p.Update)
	return nil
}

// MarshalJSON encodes the notification's params.
func (n *SessionNotification) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		SessionID string          `json:"sessionId"`
		Update    SessionUpdate   `json:"update"`
		Meta      json.RawMessage `json:"_meta,omitempty"`
	}{n.SessionID, n.Update, n.Meta})
}

// SessionUpdate is one of the update types in this file. Switch on the
// concrete type; updates of a kind this package does not know, or that could
// not be decoded, arrive as *UnknownUpdate with their JSON.
type SessionUpdate interface {
	// Kind returns the sessionUpdate discriminator, e.g. "tool_call".
	Kind() string
}

// ContentChunk is a piece of a message: user, agent or thought text, images…
type ContentChunk struct {
	Content   ContentBlock    `json:"content"`
	MessageID *string         `json:"messageId,omitempty"`
	Meta      json.RawMessage `json:"_meta,omitempty"`
}

// UserMessageChunk is part of a user message (mostly seen in load replay).
type UserMessageChunk struct{ ContentChunk }

// AgentMessageChunk is part of the agent's reply.
type AgentMessageChunk struct{ ContentChunk }

// AgentThoughtChunk is part of the agent's reasoning.
type AgentThoughtChunk struct{ ContentChunk }

// ToolCallStart is the "tool_call" update: a new tool call (or, from some
// agents, a repeat of a known one).
type ToolCallStart struct{ ToolCall }

// ToolCallProgress is the "tool_call_update" update.
type ToolCallProgress struct{ ToolCallUpdate }

// PlanUpdate replaces the agent's whole plan ("plan").
type PlanUpdate struct {
	Entries []PlanEntry     `json:"entries"`
	Meta    json.RawMessage `json:"_meta,omitempty"`
}

// PlanEntry is one step of a plan.
type PlanEntry struct {
	Content  string          `json:"content"`
	Priority string          `json:"priority"` // high, medium, low
	Status   string          `json:"status"`   // pending, in_progress, completed
	Meta     json.RawMessage `json:"_meta,omitempty"`
}

// AvailableCommandsUpdate replaces the list of slash commands.
type AvailableCommandsUpdate struct {
	AvailableCommands []AvailableCommand `json:"availableCommands"`
	Meta              json.RawMessage    `json:"_meta,omitempty"`
}

// AvailableCommand is a slash command the agent accepts as "/name args".
type AvailableCommand struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Input       *CommandInput   `json:"input,omitempty"`
	Meta        json.RawMessage `json:"_meta,omitempty"`
}

// CommandInput describes a command's free-form argument.
type CommandInput struct {
	Hint string          `json:"hint"`
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// CurrentModeUpdate reports that the agent switched session mode.
type CurrentModeUpdate struct {
	CurrentModeID string          `json:"currentModeId"`
	Meta          json.RawMessage `json:"_meta,omitempty"`
}

// ConfigOptionUpdate replaces the whole list of session config options.
type ConfigOptionUpdate struct {
	ConfigOptions []ConfigOption  `json:"configOptions"`
	Meta          json.RawMessage `json:"_meta,omitempty"`
}

// SessionInfoUpdate patches session metadata. For Title and UpdatedAt, nil
// means unchanged and a JSON null (json.RawMessage("null")) means cleared;
// use the accessors.
type SessionInfoUpdate struct {
	TitleRaw     json.RawMessage `json:"title,omitempty"`
	UpdatedAtRaw json.RawMessage `json:"updatedAt,omitempty"`
	Meta         json.RawMessage `json:"_meta,omitempty"`
}

// Title returns the new title, and whether the update sets (or clears) it.
func (u *SessionInfoUpdate) Title() (title string, changed bool) {
	return optionalString(u.TitleRaw)
}

// UpdatedAt returns the new update time (ISO 8601), and whether it changed.
func (u *SessionInfoUpdate) UpdatedAt() (updatedAt string, changed bool) {
	return optionalString(u.UpdatedAtRaw)
}

func optionalString(raw json.RawMessage) (string, bool) {
	if raw == nil {
		return "", false
	}
	var s string
	_ = json.Unmarshal(raw, &s) // null and junk both read as cleared
	return s, true
}

// UsageUpdate reports context-window fill and cumulative cost.
type UsageUpdate struct {
	Used int64           `json:"used"`
	Size int64           `json:"size"`
	Cost *Cost           `json:"cost,omitempty"`
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// Cost is an amount of money in an ISO 4217 currency.
type Cost struct {
	Amount   float64 `json:"amount"`
	Currency string  `json:"currency"`
}

// CompactionUpdate (unstable) patches the state of a context compaction.
type CompactionUpdate struct {
	CompactionID string          `json:"compactionId"`
	Status       string          `json:"status"` // in_progress, completed, failed, cancelled
	Summary      []ContentBlock  `json:"summary,omitempty"`
	Error        json.RawMessage `json:"error,omitempty"`
	Meta         json.RawMessage `json:"_meta,omitempty"`
}

// CompactionSummaryChunk (unstable) appends to a compaction's summary.
type CompactionSummaryChunk struct {
	CompactionID string          `json:"compactionId"`
	Content      ContentBlock    `json:"content"`
	Meta         json.RawMessage `json:"_meta,omitempty"`
}

// Notice (unstable) is a live notice for the user, not part of history.
type Notice struct {
	Severity    string          `json:"severity"`
	Title       string          `json:"title"`
	Description string          `json:"description,omitempty"`
	Meta        json.RawMessage `json:"_meta,omitempty"`
}

// UnknownUpdate is an update of a kind this package does not decode, or one
// whose fields could not be decoded. Raw is the update object as sent.
type UnknownUpdate struct {
	KindName string
	Raw      json.RawMessage
}

// Kind methods.
func (*UserMessageChunk) Kind() string        { return UpdateUserMessageChunk }
func (*AgentMessageChunk) Kind() string       { return UpdateAgentMessageChunk }
func (*AgentThoughtChunk) Kind() string       { return UpdateAgentThoughtChunk }
func (*ToolCallStart) Kind() string           { return UpdateToolCall }
func (*ToolCallProgress) Kind() string        { return UpdateToolCallUpdate }
func (*PlanUpdate) Kind() string              { return UpdatePlan }
func (*AvailableCommandsUpdate) Kind() string { return UpdateAvailableCommands }
func (*CurrentModeUpdate) Kind() string       { return UpdateCurrentMode }
func (*ConfigOptionUpdate) Kind() string      { return UpdateConfigOptions }
func (*SessionInfoUpdate) Kind() string       { return UpdateSessionInfo }
func (*UsageUpdate) Kind() string             { return UpdateUsage }
func (*CompactionUpdate) Kind() string        { return UpdateCompaction }
func (*CompactionSummaryChunk) Kind() string  { return UpdateCompactionSummaryChunk }
func (*Notice) Kind() string                  { return UpdateNotice }
func (u *UnknownUpdate) Kind() string         { return u.KindName }

// MarshalJSON writes the raw update back unchanged.
func (u *UnknownUpdate) MarshalJSON() ([]byte, error) {
	if len(u.Raw) == 0 {
		return json.Marshal(map[string]string{"sessionUpdate": u.KindName})
	}
	return u.Raw, nil
}

// marshalUpdate adds the discriminator to a variant's fields.
func marshalUpdate(kind string, fields any) ([]byte, error) {
	body, err := json.Marshal(fields)
	if err != nil {
		return nil, err
	}
	head := `{"sessionUpdate":"` + kind + `"`
	if len(body) > 2 {
		head += ","
	}
	return append([]byte(head), body[1:]...), nil
}

// MarshalJSON methods: each variant encodes with its discriminator.
func (u *UserMessageChunk) MarshalJSON() ([]byte, error) {
	return marshalUpdate(u.Kind(), u.ContentChunk)
}
func (u *AgentMessageChunk) MarshalJSON() ([]byte, error) {
	return marshalUpdate(u.Kind(), u.ContentChunk)
}
func (u *AgentThoughtChunk) MarshalJSON() ([]byte, error) {
	return marshalUpdate(u.Kind(), u.ContentChunk)
}
func (u *ToolCallStart) MarshalJSON() ([]byte, error) { return marshalUpdate(u.Kind(), u.ToolCall) }
func (u *ToolCallProgress) MarshalJSON() ([]byte, error) {
	return marshalUpdate(u.Kind(), u.ToolCallUpdate)
}
func (u *PlanUpdate) MarshalJSON() ([]byte, error) {
	type fields PlanUpdate
	return marshalUpdate(u.Kind(), (*fields)(u))
}
func (u *AvailableCommandsUpdate) MarshalJSON() ([]byte, error) {
	type fields AvailableCommandsUpdate
	return marshalUpdate(u.Kind(), (*fields)(u))
}
func (u *CurrentModeUpdate) MarshalJSON() ([]byte, error) {
	type fields CurrentModeUpdate
	return marshalUpdate(u.Kind(), (*fields)(u))
}
func (u *ConfigOptionUpdate) MarshalJSON() ([]byte, error) {
	type fields ConfigOptionUpdate
	return marshalUpdate(u.Kind(), (*fields)(u))
}
func (u *SessionInfoUpdate) MarshalJSON() ([]byte, error) {
	type fields SessionInfoUpdate
	return marshalUpdate(u.Kind(), (*fields)(u))
}
func (u *UsageUpdate) MarshalJSON() ([]byte, error) {
	type fields UsageUpdate
	return marshalUpdate(u.Kind(), (*fields)(u))
}
func (u *CompactionUpdate) MarshalJSON() ([]byte, error) {
	type fields CompactionUpdate
	return marshalUpdate(u.Kind(), (*fields)(u))
}
func (u *CompactionSummaryChunk) MarshalJSON() ([]byte, error) {
	type fields CompactionSummaryChunk
	return marshalUpdate(u.Kind(), (*fields)(u))
}
func (u *Notice) MarshalJSON() ([]byte, error) {
	type fields Notice
	return marshalUpdate(u.Kind(), (*fields)(u))
}

// decodeUpdate decodes one update object. It never fails: an update of an
// unknown kind, or one that is not even an object, is returned as an
// *UnknownUpdate holding a copy of raw. Fields of the wrong type are left at
// their zero value rather than rejecting the update.
func decodeUpdate(raw json.RawMessage) SessionUpdate {
	raw = bytes.TrimSpace(raw)
	var head struct {
		SessionUpdate string `json:"sessionUpdate"`
		ModeID        string `json:"modeId"`
	}
	if err := lenientUnmarshal(raw, &head); err != nil || len(raw) == 0 || raw[0] != '{' {
		return &UnknownUpdate{KindName: head.SessionUpdate, Raw: append(json.RawMessage(nil), raw...)}
	}
	var u SessionUpdate
	switch head.SessionUpdate {
	case UpdateUserMessageChunk:
		u = &UserMessageChunk{}
	case UpdateAgentMessageChunk:
		u = &AgentMessageChunk{}
	case UpdateAgentThoughtChunk:
		u = &AgentThoughtChunk{}
	case UpdateToolCall:
		u = &ToolCallStart{}
	case UpdateToolCallUpdate:
		u = &ToolCallProgress{}
	case UpdatePlan:
		u = &PlanUpdate{}
	case UpdateAvailableCommands:
		u = &AvailableCommandsUpdate{}
	case UpdateCurrentMode:
		u = &CurrentModeUpdate{}
	case UpdateConfigOptions:
		u = &ConfigOptionUpdate{}
	case UpdateSessionInfo:
		u = &SessionInfoUpdate{}
	case UpdateUsage:
		u = &UsageUpdate{}
	case UpdateCompaction:
		u = &CompactionUpdate{}
	case UpdateCompactionSummaryChunk:
		u = &CompactionSummaryChunk{}
	case UpdateNotice:
		u = &Notice{}
	case UpdatePlanContent:
		u = &PlanContentUpdate{}
	case UpdatePlanRemoved:
		u = &PlanRemoved{}
	case UpdateTerminal:
		u = &TerminalUpdate{}
	case UpdateTerminalOutputChunk:
		u = &TerminalOutputChunk{}
	default:
		return &UnknownUpdate{KindName: head.SessionUpdate, Raw: append(json.RawMessage(nil), raw...)}
	}
	if err := decodeVariant(raw, u); err != nil {
		return &UnknownUpdate{KindName: head.SessionUpdate, Raw: append(json.RawMessage(nil), raw...)}
	}
	if m, ok := u.(*CurrentModeUpdate); ok && m.CurrentModeID == "" {
		m.CurrentModeID = head.ModeID // one doc example uses modeId
	}
	return u
}

// decodeVariant decodes raw into the fields of a variant, bypassing its
// MarshalJSON-only method set.
func decodeVariant(raw []byte, u SessionUpdate) error {
	switch v := u.(type) {
	case *UserMessageChunk:
		return lenientUnmarshal(raw, &v.ContentChunk)
	case *AgentMessageChunk:
		return lenientUnmarshal(raw, &v.ContentChunk)
	case *AgentThoughtChunk:
		return lenientUnmarshal(raw, &v.ContentChunk)
	case *ToolCallStart:
		return lenientUnmarshal(raw, &v.ToolCall)
	case *ToolCallProgress:
		return lenientUnmarshal(raw, &v.ToolCallUpdate)
	}
	// The remaining variants have no UnmarshalJSON of their own, so decoding
	// into them directly uses the plain struct fields.
	return lenientUnmarshal(raw, u)
}
