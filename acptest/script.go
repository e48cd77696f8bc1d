package acptest

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"time"
)

// Script tells the fake agent how to behave. Every field is optional; the zero
// Script is a well-behaved agent that answers every turn with end_turn. A
// Script round-trips through JSON (LoadScript, WriteScript), which is how the
// fakeagent binary receives it.
type Script struct {
	// ProtocolVersion is the version the agent answers to initialize
	// (default 1), whatever the client asked for.
	ProtocolVersion int `json:"protocolVersion,omitempty"`
	// Initialize shapes the initialize result.
	Initialize InitializeScript `json:"initialize,omitzero"`
	// NewSession shapes session/new.
	NewSession NewSessionScript `json:"newSession,omitzero"`
	// LoadSession shapes session/load.
	LoadSession LoadSessionScript `json:"loadSession,omitzero"`
	// SessionList shapes session/list.
	SessionList SessionListScript `json:"sessionList,omitzero"`
	// SetMode shapes session/set_mode.
	SetMode SetModeScript `json:"setMode,omitzero"`
	// Steering makes the agent offer and perform steering of a running
	// turn in one wire form (see SteeringScript).
	Steering SteeringScript `json:"steering,omitzero"`
	// Methods gives canned replies by method name. An entry here replaces
	// the built-in handling of any method except session/prompt: use it for
	// vendor methods (session/compact, _vendor/thing) or to make a standard
	// method fail. A method neither built in nor listed gets -32601.
	Methods map[string]Reply `json:"methods,omitempty"`
	// Prompts lists the turns: a session/prompt runs the first turn whose
	// Match is a substring of the prompt text, else the first turn without a
	// Match, else an empty turn that ends with end_turn.
	Prompts []Turn `json:"prompts,omitempty"`
	// OnStart runs once when the connection opens, before any message is
	// read: junk before initialize, stderr banners, early updates (give them
	// a SessionID). Nothing is read meanwhile, so these steps must not wait
	// for the client (no requests, no waitCancel).
	OnStart []Step `json:"onStart,omitempty"`
	// RequestIDs chooses the ids of requests the agent sends.
	RequestIDs RequestIDs `json:"requestIds,omitzero"`
	// StayAfterEOF keeps the agent alive after its input ends, like agents
	// that ignore stdin close; it then stops only when Serve's context ends
	// or the process is killed.
	StayAfterEOF bool `json:"stayAfterEOF,omitempty"`
	// QuietReports stops the text chunks that report what the client
	// answered to the agent's requests ("permission: selected allow", "write
	// PATH: ok", …), for demos; tests normally want them.
	QuietReports bool `json:"quietReports,omitempty"`
	// IgnoreSIGTERM makes the fakeagent binary ignore SIGTERM, so a client
	// must escalate to SIGKILL. In-process agents ignore it.
	IgnoreSIGTERM bool `json:"ignoreSIGTERM,omitempty"`
}

// InitializeScript shapes the initialize reply.
type InitializeScript struct {
	// AgentCapabilities is sent verbatim; empty means DefaultAgentCapabilities.
	AgentCapabilities json.RawMessage `json:"agentCapabilities,omitempty"`
	// AuthMethods is sent verbatim; empty means [].
	AuthMethods json.RawMessage `json:"authMethods,omitempty"`
	// AgentInfo is sent verbatim; empty means DefaultAgentInfo.
	AgentInfo json.RawMessage `json:"agentInfo,omitempty"`
	// Meta becomes the result's _meta.
	Meta json.RawMessage `json:"_meta,omitempty"`
	// Steps run before the reply (e.g. stderr noise, a slow start).
	Steps []Step `json:"steps,omitempty"`
	// Error, if set, is sent instead of a result.
	Error *Error `json:"error,omitempty"`
}

// NewSessionScript shapes the session/new reply.
type NewSessionScript struct {
	// SessionIDs are handed out in order; after they run out the agent
	// generates "sess_1", "sess_2", … (counting every session/new).
	SessionIDs []string `json:"sessionIds,omitempty"`
	// Steps run before the reply, with the session id about to be handed
	// out, so their updates arrive before the client knows the id.
	Steps []Step `json:"steps,omitempty"`
	// Modes, ConfigOptions and Models (legacy) are copied into the result
	// when set. ConfigOptions is also the starting state that
	// session/set_config_option updates and returns.
	Modes         json.RawMessage `json:"modes,omitempty"`
	ConfigOptions json.RawMessage `json:"configOptions,omitempty"`
	Models        json.RawMessage `json:"models,omitempty"`
	// Meta becomes the result's _meta.
	Meta json.RawMessage `json:"_meta,omitempty"`
	// RequireAuth, if set, makes session/new fail with AuthError until
	// authenticate has succeeded with this methodId ("*" for any), and
	// again after a logout.
	RequireAuth string `json:"requireAuth,omitempty"`
	// AuthError is the error for RequireAuth; default -32000
	// "Authentication required".
	AuthError *Error `json:"authError,omitempty"`
}

// LoadSessionScript shapes session/load.
type LoadSessionScript struct {
	// Sessions lists the ids that can be loaded, besides those created or
	// resumed on this connection. Loading any other id fails with
	// UnknownError.
	Sessions []string `json:"sessions,omitempty"`
	// Replay runs before the reply with the requested session id: the
	// history as session/update steps.
	Replay []Step `json:"replay,omitempty"`
	// Modes, ConfigOptions and Models (legacy) are copied into the result
	// when set, of session/resume's too (which resumes any id, without a
	// replay).
	Modes         json.RawMessage `json:"modes,omitempty"`
	ConfigOptions json.RawMessage `json:"configOptions,omitempty"`
	Models        json.RawMessage `json:"models,omitempty"`
	// NullResult answers null instead of an object, like older agents.
	NullResult bool `json:"nullResult,omitempty"`
	// UnknownError is the error for unknown ids; default -32002
	// "Resource not found".
	UnknownError *Error `json:"unknownError,omitempty"`
}

// SetModeScript shapes session/set_mode, which otherwise accepts any mode
// silently.
type SetModeScript struct {
	// Refuse lists the mode ids the agent refuses, with -32602 "Invalid
	// params".
	Refuse []string `json:"refuse,omitempty"`
	// Report makes the agent confirm an accepted mode with a
	// current_mode_update before it answers, as most real agents do.
	Report bool `json:"report,omitempty"`
}

// Reply is a canned answer to a request.
type Reply struct {
	// Steps run before the answer.
	Steps []Step `json:"steps,omitempty"`
	// Result is sent verbatim; empty means {}.
	Result json.RawMessage `json:"result,omitempty"`
	// Error, if set, is sent instead of a result.
	Error *Error `json:"error,omitempty"`
}

// Turn is the script of one prompt turn.
type Turn struct {
	// Match selects the turn: a substring of the prompt's text blocks
	// (joined by "\n"). Empty matches any prompt, as a default.
	Match string `json:"match,omitempty"`
	// Steps run in order. A session/cancel stops them after the current
	// step (a sleep or waitCancel ends at once) and the turn answers
	// "cancelled".
	Steps []Step `json:"steps,omitempty"`
	// StopReason is the answer when the steps finish; default "end_turn".
	StopReason string `json:"stopReason,omitempty"`
	// Usage and Meta become the prompt result's usage (unstable) and _meta.
	Usage json.RawMessage `json:"usage,omitempty"`
	Meta  json.RawMessage `json:"_meta,omitempty"`
	// Error, if set, is sent instead of a stop reason (not on cancel).
	Error *Error `json:"error,omitempty"`
	// After runs once the prompt has been answered: late updates.
	After []Step `json:"after,omitempty"`
	// IgnoreCancel makes the turn carry on through session/cancel and
	// answer with its normal stop reason, for watchdog tests.
	IgnoreCancel bool `json:"ignoreCancel,omitempty"`
}

// RequestIDs chooses the ids of the requests the agent sends.
type RequestIDs struct {
	// Start is the first number (default 0).
	Start int64 `json:"start,omitempty"`
	// Strings sends UUID-shaped string ids built from the number instead of
	// plain numbers.
	Strings bool `json:"strings,omitempty"`
}

// Error is a JSON-RPC error object.
type Error struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// Error formats the code and message, so an Error can be returned as a Go
// error.
func (e *Error) Error() string {
	return fmt.Sprintf("acptest: JSON-RPC error %d: %s", e.Code, e.Message)
}

// Step is one action of the agent. Set exactly one of the action fields;
// SessionID may accompany any of them.
type Step struct {
	// SessionID overrides the session the step speaks for (default: the
	// session of the turn or request running the step).
	SessionID string `json:"sessionId,omitempty"`

	// Update sends session/update with this update object; sessionId is
	// filled in, and CwdToken replaced by the session's cwd.
	Update json.RawMessage `json:"update,omitempty"`
	// Text sends an agent_message_chunk with this text.
	Text string `json:"text,omitempty"`
	// Notify sends any notification verbatim (vendor ones included).
	Notify *Notification `json:"notify,omitempty"`
	// Request sends any request to the client, waits for the answer and
	// reports it as a text chunk: "request METHOD: result JSON" or
	// "request METHOD: error CODE MESSAGE".
	Request *Request `json:"request,omitempty"`
	// Permission asks session/request_permission and branches on the
	// answer (see Permission).
	Permission *Permission `json:"permission,omitempty"`
	// ReadFile calls fs/read_text_file and reports "read PATH: CONTENT" or
	// "read PATH: error CODE MESSAGE".
	ReadFile *ReadFile `json:"readFile,omitempty"`
	// WriteFile calls fs/write_text_file and reports "write PATH: ok" or
	// "write PATH: error CODE MESSAGE".
	WriteFile *WriteFile `json:"writeFile,omitempty"`
	// Terminal runs a command through terminal/* (see Terminal).
	Terminal *Terminal `json:"terminal,omitempty"`
	// Sleep pauses ("50ms"); a session/cancel ends it early.
	Sleep Duration `json:"sleep,omitempty"`
	// Junk writes this text plus "\n" to stdout: a log line, broken JSON.
	Junk string `json:"junk,omitempty"`
	// Raw writes these bytes to stdout exactly, without adding a newline:
	// partial lines, CRLF, several lines at once.
	Raw string `json:"raw,omitempty"`
	// Huge sends one valid session/update line whose agent_message_chunk
	// text is Huge bytes long ("x" repeated), streamed in small pieces.
	Huge int64 `json:"huge,omitempty"`
	// Stderr writes this text plus "\n" to stderr.
	Stderr string `json:"stderr,omitempty"`
	// Respond writes a response nobody asked for (unknown or null id).
	Respond *Stray `json:"respond,omitempty"`
	// Exit ends the agent at once with this code: the process exits, an
	// in-process agent closes its connection and Serve returns *ExitError.
	Exit *int `json:"exit,omitempty"`
	// Hang stops the step list for good: the request is never answered,
	// even on cancel (also one that came before the step), until the
	// connection ends.
	Hang bool `json:"hang,omitempty"`
	// WaitCancel blocks until session/cancel (or $/cancel_request for the
	// running request) arrives; the turn then answers "cancelled" unless it
	// ignores cancel.
	WaitCancel bool `json:"waitCancel,omitempty"`
	// WaitSteer blocks a turn until text is steered into it (see
	// SteeringScript) or session/cancel arrives.
	WaitSteer bool `json:"waitSteer,omitempty"`
}

// Notification is a notification the agent sends verbatim.
type Notification struct {
	// Method is any method name, standard or vendor ("_vendor/thing").
	Method string          `json:"method"`
	Params json.RawMessage `json:"params,omitempty"`
}

// Request is a request the agent sends verbatim and waits on.
type Request struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params,omitempty"`
	// CancelAfter, if set, sends $/cancel_request for this request after
	// the delay and keeps waiting for the (now owed) answer.
	CancelAfter Duration `json:"cancelAfter,omitempty"`
}

// Permission is a session/request_permission step. The agent reports the
// outcome as a text chunk: "permission: selected OPTION_ID",
// "permission: cancelled", "permission: error CODE MESSAGE" or
// "permission: unknown OUTCOME_JSON", then runs the matching branch. Branch
// steps run to their end even when the turn was cancelled.
type Permission struct {
	// ToolCall is the ToolCallUpdate sent; default {"toolCallId":"call_1"}.
	ToolCall json.RawMessage `json:"toolCall,omitempty"`
	// Options default to DefaultPermissionOptions ("allow", "reject").
	Options []PermissionOption `json:"options,omitempty"`
	// OnSelect runs the steps listed for the selected optionId.
	OnSelect map[string][]Step `json:"onSelect,omitempty"`
	// OnReject runs when the selected option's kind starts with "reject"
	// and OnSelect has no entry for it.
	OnReject []Step `json:"onReject,omitempty"`
	// OnCancelled runs when the outcome is "cancelled".
	OnCancelled []Step `json:"onCancelled,omitempty"`
	// CancelAfter, if set, sends $/cancel_request for the permission
	// request after the delay and keeps waiting for the answer.
	CancelAfter Duration `json:"cancelAfter,omitempty"`
}

// PermissionOption is one choice offered in a permission request.
type PermissionOption struct {
	// OptionID is what the client answers to select it; Name is shown to
	// the user; Kind is allow_once, allow_always, reject_once or
	// reject_always.
	OptionID string `json:"optionId"`
	Name     string `json:"name"`
	Kind     string `json:"kind"`
}

// ReadFile is an fs/read_text_file step.
type ReadFile struct {
	// Path is absolute (CwdToken stands for the session's cwd); Line
	// (1-based) and Limit (lines) are optional.
	Path  string `json:"path"`
	Line  int    `json:"line,omitempty"`
	Limit int    `json:"limit,omitempty"`
}

// WriteFile is an fs/write_text_file step.
type WriteFile struct {
	// Path is absolute (CwdToken stands for the session's cwd); Content
	// replaces the file's text.
	Path    string `json:"path"`
	Content string `json:"content"`
	// OnOK runs after the report when the client wrote the file, OnError
	// when it answered with an error (refused it, say).
	OnOK    []Step `json:"onOk,omitempty"`
	OnError []Step `json:"onError,omitempty"`
}

// Terminal is a terminal step: terminal/create, an optional
// tool_call_update embedding the terminal, optional terminal/kill,
// terminal/wait_for_exit, terminal/output, terminal/release. It reports
// "terminal: exit CODE signal SIGNAL truncated BOOL output QUOTED" or
// "terminal: METHOD error CODE MESSAGE" at the first failure.
type Terminal struct {
	// Command, Args, Env (an array of {"name","value"}), Cwd and
	// OutputByteLimit are terminal/create's parameters.
	Command         string          `json:"command"`
	Args            []string        `json:"args,omitempty"`
	Env             json.RawMessage `json:"env,omitempty"`
	Cwd             string          `json:"cwd,omitempty"`
	OutputByteLimit int64           `json:"outputByteLimit,omitempty"`
	// ToolCallID, if set, sends a tool_call_update for this tool call with
	// the terminal as its content right after create.
	ToolCallID string `json:"toolCallId,omitempty"`
	// Kill calls terminal/kill before waiting.
	Kill bool `json:"kill,omitempty"`
}

// Stray is a response to a request that was never made.
type Stray struct {
	// ID is sent verbatim; empty means null.
	ID json.RawMessage `json:"id,omitempty"`
	// Result is sent verbatim when Error is nil; empty means {}.
	Result json.RawMessage `json:"result,omitempty"`
	Error  *Error          `json:"error,omitempty"`
}

// Duration is a time.Duration that reads and writes JSON as a Go duration
// string ("250ms"); a bare JSON number is taken as milliseconds.
type Duration time.Duration

// MarshalJSON writes the duration as a string.
func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(d).String())
}

// UnmarshalJSON reads a duration string or a number of milliseconds.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		v, err := time.ParseDuration(s)
		if err != nil {
			return err
		}
		*d = Duration(v)
		return nil
	}
	ms, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return fmt.Errorf("acptest: duration %s is neither a string nor milliseconds", b)
	}
	*d = Duration(ms * float64(time.Millisecond))
	return nil
}

// Defaults used when a Script leaves a field empty.
var (
	DefaultAgentCapabilities = json.RawMessage(`{"loadSession":true,"promptCapabilities":{"image":true,"audio":false,"embeddedContext":true},"mcpCapabilities":{"http":false,"sse":false},"sessionCapabilities":{"list":{},"resume":{},"close":{}}}`)
	DefaultAgentInfo         = json.RawMessage(`{"name":"acptest-fakeagent","title":"acptest fake agent","version":"1.0.0"}`)
	DefaultPermissionOptions = []PermissionOption{
		{OptionID: "allow", Name: "Allow", Kind: "allow_once"},
		{OptionID: "reject", Name: "Reject", Kind: "reject_once"},
	}
)

// LoadScript reads a Script from a JSON file. Unknown fields are errors, so
// a typo in a test script fails loudly.
func LoadScript(path string) (Script, error) {
	f, err := os.Open(path)
	if err != nil {
		return Script{}, err
	}
	defer f.Close()
	var s Script
	dec := json.NewDecoder(f)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return Script{}, fmt.Errorf("acptest: script %s: %w", path, err)
	}
	return s, nil
}
