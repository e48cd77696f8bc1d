package acpclient

import "encoding/json"

// Permission option kinds (PermissionOption.Kind).
const (
	PermissionAllowOnce    = "allow_once"
	PermissionAllowAlways  = "allow_always"
	PermissionRejectOnce   = "reject_once"
	PermissionRejectAlways = "reject_always"
)

// RequestPermissionRequest is the params of "session/request_permission":
// the agent asks to run a tool call.
type RequestPermissionRequest struct {
	SessionID string             `json:"sessionId"`
	ToolCall  ToolCallUpdate     `json:"toolCall"`
	Options   []PermissionOption `json:"options"`
	Meta      json.RawMessage    `json:"_meta,omitempty"`
}

// PermissionOption is one answer the user may pick.
type PermissionOption struct {
	OptionID string          `json:"optionId"`
	Name     string          `json:"name"`
	Kind     string          `json:"kind"`
	Meta     json.RawMessage `json:"_meta,omitempty"`
}

// RequestPermissionResponse answers a permission request.
type RequestPermissionResponse struct {
	Outcome PermissionOutcome `json:"outcome"`
	Meta    json.RawMessage   `json:"_meta,omitempty"`
}

// PermissionOutcome is "selected" with an option id, or "cancelled".
type PermissionOutcome struct {
	Outcome  string          `json:"outcome"`
	OptionID string          `json:"optionId,omitempty"`
	Meta     json.RawMessage `json:"_meta,omitempty"`
}

// PermissionSelected returns the response that picks optionID.
func PermissionSelected(optionID string) *RequestPermissionResponse {
	return &RequestPermissionResponse{Outcome: PermissionOutcome{Outcome: "selected", OptionID: optionID}}
}

// PermissionCancelled returns the response owed to every pending permission
// request of a cancelled turn.
func PermissionCancelled() *RequestPermissionResponse {
	return &RequestPermissionResponse{Outcome: PermissionOutcome{Outcome: "cancelled"}}
}

// ReadTextFileRequest is the params of "fs/read_text_file". Line is 1-based;
// nil Line or Limit means from the start, to the end.
type ReadTextFileRequest struct {
	SessionID string          `json:"sessionId"`
	Path      string          `json:"path"`
	Line      *int            `json:"line,omitempty"`
	Limit     *int            `json:"limit,omitempty"`
	Meta      json.RawMessage `json:"_meta,omitempty"`
}

// ReadTextFileResponse carries the file's text.
type ReadTextFileResponse struct {
	Content string          `json:"content"`
	Meta    json.RawMessage `json:"_meta,omitempty"`
}

// WriteTextFileRequest is the params of "fs/write_text_file".
type WriteTextFileRequest struct {
	SessionID string          `json:"sessionId"`
	Path      string          `json:"path"`
	Content   string          `json:"content"`
	Meta      json.RawMessage `json:"_meta,omitempty"`
}

// CreateTerminalRequest is the params of "terminal/create".
type CreateTerminalRequest struct {
	SessionID       string          `json:"sessionId"`
	Command         string          `json:"command"`
	Args            []string        `json:"args,omitempty"`
	Env             []EnvVariable   `json:"env,omitempty"`
	Cwd             string          `json:"cwd,omitempty"`
	OutputByteLimit *int64          `json:"outputByteLimit,omitempty"`
	Meta            json.RawMessage `json:"_meta,omitempty"`
}

// CreateTerminalResponse names the new terminal.
type CreateTerminalResponse struct {
	TerminalID string          `json:"terminalId"`
	Meta       json.RawMessage `json:"_meta,omitempty"`
}

// TerminalRequest is the params of terminal output, wait_for_exit, kill and
// release.
type TerminalRequest struct {
	SessionID  string          `json:"sessionId"`
	TerminalID string          `json:"terminalId"`
	Meta       json.RawMessage `json:"_meta,omitempty"`
}

// TerminalOutputResponse is a terminal's output so far.
type TerminalOutputResponse struct {
	Output     string              `json:"output"`
	Truncated  bool                `json:"truncated"`
	ExitStatus *TerminalExitStatus `json:"exitStatus,omitempty"`
	Meta       json.RawMessage     `json:"_meta,omitempty"`
}

// TerminalExitStatus is how a terminal's command ended.
type TerminalExitStatus struct {
	ExitCode *int            `json:"exitCode,omitempty"`
	Signal   *string         `json:"signal,omitempty"`
	Meta     json.RawMessage `json:"_meta,omitempty"`
}

// CreateElicitationRequest is the params of "elicitation/create": the agent
// asks the user for structured input (Mode "form") or to open a URL ("url").
type CreateElicitationRequest struct {
	Message         string          `json:"message"`
	Mode            string          `json:"mode"`
	SessionID       string          `json:"sessionId,omitempty"`
	ToolCallID      string          `json:"toolCallId,omitempty"`
	RequestID       json.RawMessage `json:"requestId,omitempty"`
	RequestedSchema json.RawMessage `json:"requestedSchema,omitempty"` // form
	ElicitationID   string          `json:"elicitationId,omitempty"`   // url
	URL             string          `json:"url,omitempty"`             // url
	Meta            json.RawMessage `json:"_meta,omitempty"`
}

// CreateElicitationResponse is the user's answer: Action "accept" (with
// Content for forms), "decline" or "cancel".
type CreateElicitationResponse struct {
	Action  string          `json:"action"`
	Content map[string]any  `json:"content,omitempty"`
	Meta    json.RawMessage `json:"_meta,omitempty"`
}

// CompleteElicitationNotification reports a finished out-of-band URL flow.
type CompleteElicitationNotification struct {
	ElicitationID string          `json:"elicitationId"`
	Meta          json.RawMessage `json:"_meta,omitempty"`
}
