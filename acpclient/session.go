package acpclient

import "encoding/json"

// NewSessionRequest is the params of "session/new".
type NewSessionRequest struct {
	Cwd                   string          `json:"cwd"`
	MCPServers            []MCPServer     `json:"mcpServers"`
	AdditionalDirectories []string        `json:"additionalDirectories,omitempty"`
	Meta                  json.RawMessage `json:"_meta,omitempty"`
}

// SessionSetup is what new, load and resume return about a session.
type SessionSetup struct {
	Modes         *ModeState      `json:"modes,omitempty"`
	ConfigOptions []ConfigOption  `json:"configOptions,omitempty"`
	Models        *ModelState     `json:"models,omitempty"` // legacy
	Meta          json.RawMessage `json:"_meta,omitempty"`
}

// NewSessionResponse is the agent's answer to "session/new".
type NewSessionResponse struct {
	SessionID string `json:"sessionId"`
	SessionSetup
}

// LoadSessionRequest is the params of "session/load". The agent replays the
// conversation as session updates before it answers.
type LoadSessionRequest struct {
	SessionID             string          `json:"sessionId"`
	Cwd                   string          `json:"cwd"`
	MCPServers            []MCPServer     `json:"mcpServers"`
	AdditionalDirectories []string        `json:"additionalDirectories,omitempty"`
	Meta                  json.RawMessage `json:"_meta,omitempty"`
}

// ResumeSessionRequest is the params of "session/resume" (no replay).
type ResumeSessionRequest struct {
	SessionID             string          `json:"sessionId"`
	Cwd                   string          `json:"cwd"`
	MCPServers            []MCPServer     `json:"mcpServers,omitempty"`
	AdditionalDirectories []string        `json:"additionalDirectories,omitempty"`
	Meta                  json.RawMessage `json:"_meta,omitempty"`
}

// ForkSessionRequest (unstable) is the params of "session/fork".
type ForkSessionRequest ResumeSessionRequest

// ListSessionsRequest is the params of "session/list".
type ListSessionsRequest struct {
	Cwd    string          `json:"cwd,omitempty"`
	Cursor string          `json:"cursor,omitempty"`
	Meta   json.RawMessage `json:"_meta,omitempty"`
}

// ListSessionsResponse is one page of sessions; NextCursor is empty on the last.
type ListSessionsResponse struct {
	Sessions   []SessionInfo   `json:"sessions"`
	NextCursor string          `json:"nextCursor,omitempty"`
	Meta       json.RawMessage `json:"_meta,omitempty"`
}

// SessionInfo describes a stored session.
type SessionInfo struct {
	SessionID             string          `json:"sessionId"`
	Cwd                   string          `json:"cwd"`
	AdditionalDirectories []string        `json:"additionalDirectories,omitempty"`
	Title                 string          `json:"title,omitempty"`
	UpdatedAt             string          `json:"updatedAt,omitempty"`
	Meta                  json.RawMessage `json:"_meta,omitempty"`
}

// SessionRef names a session; it is the params of delete, close and cancel.
type SessionRef struct {
	SessionID string          `json:"sessionId"`
	Meta      json.RawMessage `json:"_meta,omitempty"`
}

// Stop reasons (PromptResponse.StopReason).
const (
	StopEndTurn         = "end_turn"
	StopMaxTokens       = "max_tokens"
	StopMaxTurnRequests = "max_turn_requests"
	StopRefusal         = "refusal"
	StopCancelled       = "cancelled"
)

// PromptRequest is the params of "session/prompt".
type PromptRequest struct {
	SessionID string          `json:"sessionId"`
	Prompt    []ContentBlock  `json:"prompt"`
	Meta      json.RawMessage `json:"_meta,omitempty"`
}

// PromptResponse ends a turn.
type PromptResponse struct {
	StopReason string `json:"stopReason"`
	// Usage is not in the stable schema but several agents send it.
	Usage *PromptUsage    `json:"usage,omitempty"`
	Meta  json.RawMessage `json:"_meta,omitempty"`
}

// PromptUsage is the token usage of one turn.
type PromptUsage struct {
	TotalTokens       int64 `json:"totalTokens"`
	InputTokens       int64 `json:"inputTokens"`
	OutputTokens      int64 `json:"outputTokens"`
	ThoughtTokens     int64 `json:"thoughtTokens,omitempty"`
	CachedReadTokens  int64 `json:"cachedReadTokens,omitempty"`
	CachedWriteTokens int64 `json:"cachedWriteTokens,omitempty"`
}

// SetModeRequest is the params of "session/set_mode".
type SetModeRequest struct {
	SessionID string          `json:"sessionId"`
	ModeID    string          `json:"modeId"`
	Meta      json.RawMessage `json:"_meta,omitempty"`
}

// SetConfigOptionRequest is the params of "session/set_config_option". Set
// Value for a select option, or Bool for a boolean one.
type SetConfigOptionRequest struct {
	SessionID string
	ConfigID  string
	Value     string
	Bool      *bool
	Meta      json.RawMessage
}

// MarshalJSON writes the select or boolean form.
func (r SetConfigOptionRequest) MarshalJSON() ([]byte, error) {
	if r.Bool != nil {
		return json.Marshal(struct {
			SessionID string          `json:"sessionId"`
			ConfigID  string          `json:"configId"`
			Type      string          `json:"type"`
			Value     bool            `json:"value"`
			Meta      json.RawMessage `json:"_meta,omitempty"`
		}{r.SessionID, r.ConfigID, ConfigBoolean, *r.Bool, r.Meta})
	}
	return json.Marshal(struct {
		SessionID string          `json:"sessionId"`
		ConfigID  string          `json:"configId"`
		Value     string          `json:"value"`
		Meta      json.RawMessage `json:"_meta,omitempty"`
	}{r.SessionID, r.ConfigID, r.Value, r.Meta})
}

// SetConfigOptionResponse carries the complete, current option list.
type SetConfigOptionResponse struct {
	ConfigOptions []ConfigOption  `json:"configOptions"`
	Meta          json.RawMessage `json:"_meta,omitempty"`
}

// SetModelRequest is the params of the legacy "session/set_model".
type SetModelRequest struct {
	SessionID string          `json:"sessionId"`
	ModelID   string          `json:"modelId"`
	Meta      json.RawMessage `json:"_meta,omitempty"`
}

// MCPServer configures an MCP server the agent should connect to. Type ""
// is stdio (Command, Args, Env); "http" and "sse" use URL and Headers.
type MCPServer struct {
	Type     string          `json:"type,omitempty"`
	Name     string          `json:"name"`
	Command  string          `json:"command,omitempty"`
	Args     []string        `json:"args,omitempty"`
	Env      []EnvVariable   `json:"env,omitempty"`
	URL      string          `json:"url,omitempty"`
	Headers  []EnvVariable   `json:"headers,omitempty"`
	ServerID string          `json:"serverId,omitempty"` // type "acp", unstable
	Meta     json.RawMessage `json:"_meta,omitempty"`
	// Required is the host's, never sent: a host that may leave out a
	// server the agent cannot take (see MCPCapabilities.Takes) keeps this
	// one, and fails instead.
	Required bool `json:"-"`
}

// MarshalJSON writes the fields of the server's transport, with the arrays
// the schema requires present even when empty.
func (s MCPServer) MarshalJSON() ([]byte, error) {
	nonNil := func(v []EnvVariable) []EnvVariable {
		if v == nil {
			return []EnvVariable{}
		}
		return v
	}
	switch s.Type {
	case "", "stdio":
		args := s.Args
		if args == nil {
			args = []string{}
		}
		return json.Marshal(struct {
			Name    string          `json:"name"`
			Command string          `json:"command"`
			Args    []string        `json:"args"`
			Env     []EnvVariable   `json:"env"`
			Meta    json.RawMessage `json:"_meta,omitempty"`
		}{s.Name, s.Command, args, nonNil(s.Env), s.Meta})
	case "http", "sse":
		return json.Marshal(struct {
			Type    string          `json:"type"`
			Name    string          `json:"name"`
			URL     string          `json:"url"`
			Headers []EnvVariable   `json:"headers"`
			Meta    json.RawMessage `json:"_meta,omitempty"`
		}{s.Type, s.Name, s.URL, nonNil(s.Headers), s.Meta})
	}
	type fields MCPServer
	return json.Marshal(fields(s))
}

// EnvVariable is a name/value pair: an environment variable or an HTTP header.
type EnvVariable struct {
	Name  string          `json:"name"`
	Value string          `json:"value"`
	Meta  json.RawMessage `json:"_meta,omitempty"`
}
