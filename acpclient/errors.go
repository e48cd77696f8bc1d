package acpclient

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Error codes used by ACP. Agents may send others; Error keeps any code.
const (
	CodeParseError       = -32700
	CodeInvalidRequest   = -32600
	CodeMethodNotFound   = -32601
	CodeInvalidParams    = -32602
	CodeInternalError    = -32603
	CodeRequestCancelled = -32800
	CodeAuthRequired     = -32000
	CodeResourceNotFound = -32002
)

// Error is a JSON-RPC error object, as received from an agent or as sent to
// one. Errors returned by Conn's calls wrap it: use errors.As to read the code.
// A handler of the Client returns one to choose the code the agent sees.
type Error struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// NewError returns an Error with the given code and message.
func NewError(code int, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

func (e *Error) Error() string {
	if len(e.Data) > 0 && len(e.Data) <= 512 {
		return fmt.Sprintf("%s (code %d, data %s)", e.Message, e.Code, e.Data)
	}
	return fmt.Sprintf("%s (code %d)", e.Message, e.Code)
}

// DataMessage returns data.message when the error's data is an object that
// carries one. Several agents put the useful, user-facing text there and a
// generic text in Message.
func (e *Error) DataMessage() string {
	var d struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(e.Data, &d) != nil {
		return ""
	}
	return d.Message
}

// Sentinel errors a caller can branch on with errors.Is.
var (
	// ErrClosed reports a call on a connection that has ended.
	ErrClosed = errors.New("connection closed")
	// ErrNotInitialized reports a call made before Initialize succeeded.
	ErrNotInitialized = errors.New("connection not initialized")
	// ErrUnsupported reports a call or content the agent did not advertise
	// support for; nothing was sent.
	ErrUnsupported = errors.New("not supported by the agent")
	// ErrProtocolVersion reports an agent that answered initialize with a
	// protocol version this package does not speak.
	ErrProtocolVersion = errors.New("unsupported protocol version")
	// ErrLineTooLong reports an incoming line larger than the configured
	// maximum; it ends the connection, since the stream cannot be resynchronised
	// cheaply without trusting the rest of an oversized line.
	ErrLineTooLong = errors.New("line exceeds maximum size")
	// ErrAgentNotFound reports an agent binary that could not be found.
	ErrAgentNotFound = errors.New("agent binary not found")
	// ErrProgramNotFound reports a command's program (CommandTransport.Start,
	// such as a terminal's) that could not be found.
	ErrProgramNotFound = errors.New("program not found")
)

// IsAuthRequired reports whether err is the agent's "authentication required"
// error (-32000), the signal to run an authentication flow and retry.
func IsAuthRequired(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == CodeAuthRequired
}

// CallError is the error of a call the agent answered with a JSON-RPC error.
// It names the method; Unwrap yields the *Error.
type CallError struct {
	Method string
	Err    *Error
}

func (e *CallError) Error() string {
	return fmt.Sprintf("acpclient: %s: %v", e.Method, e.Err)
}

// Unwrap returns the agent's *Error.
func (e *CallError) Unwrap() error { return e.Err }

// ExitError reports that the agent's stream ended because its process (or
// remote command) exited. Stderr holds the redacted tail of what it wrote there.
type ExitError struct {
	// Err is the process's exit error (nil when it exited with status 0).
	Err error
	// Stderr is the last part of its standard error, secrets redacted.
	Stderr string
}

func (e *ExitError) Error() string {
	msg := "agent exited"
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	if e.Stderr != "" {
		msg += "; stderr: " + e.Stderr
	}
	return msg
}

// Unwrap returns the process's exit error.
func (e *ExitError) Unwrap() error { return e.Err }
