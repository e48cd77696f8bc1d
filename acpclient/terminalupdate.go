package acpclient

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
)

// Session update kinds of the next protocol version's agent-side terminals
// (draft): commands the agent runs itself, reported as they run.
const (
	UpdateTerminal            = "terminal_update"       // v2 draft
	UpdateTerminalOutputChunk = "terminal_output_chunk" // v2 draft
)

// TerminalUpdate (v2 draft) creates or patches the state of a terminal the
// agent runs itself. Only TerminalID is required; the other fields patch:
// nil means unchanged. Command and Cwd are raw so that a JSON null (clear)
// can be told from an omitted field; use the accessors.
type TerminalUpdate struct {
	TerminalID string          `json:"terminalId"`
	CommandRaw json.RawMessage `json:"command,omitempty"`
	CwdRaw     json.RawMessage `json:"cwd,omitempty"`
	// Output, when set, replaces the terminal's whole output so far.
	Output *TerminalSnapshot `json:"output,omitempty"`
	// ExitStatus, when set, marks the terminal exited (even with neither
	// code nor signal known).
	ExitStatus *TerminalExitStatus `json:"exitStatus,omitempty"`
	Meta       json.RawMessage     `json:"_meta,omitempty"`
}

// Command returns the command the terminal runs, and whether the update
// sets (or clears) it.
func (u *TerminalUpdate) Command() (string, bool) { return optionalString(u.CommandRaw) }

// Cwd returns the command's working directory, and whether the update sets
// (or clears) it.
func (u *TerminalUpdate) Cwd() (string, bool) { return optionalString(u.CwdRaw) }

// TerminalSnapshot is an authoritative copy of a terminal's output bytes,
// base64-encoded in Data.
type TerminalSnapshot struct {
	Data string          `json:"data"`
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// Bytes decodes the snapshot's output bytes.
func (s *TerminalSnapshot) Bytes() ([]byte, error) { return decodeTerminalData(s.Data) }

// TerminalOutputChunk (v2 draft) appends bytes, base64-encoded in Data, to
// the output of a terminal the agent runs itself.
type TerminalOutputChunk struct {
	TerminalID string          `json:"terminalId"`
	Data       string          `json:"data"`
	Meta       json.RawMessage `json:"_meta,omitempty"`
}

// Bytes decodes the chunk's output bytes.
func (c *TerminalOutputChunk) Bytes() ([]byte, error) { return decodeTerminalData(c.Data) }

// decodeTerminalData decodes base64 output, padded or not.
func decodeTerminalData(s string) ([]byte, error) {
	b, err := base64.StdEncoding.DecodeString(s)
	if err == nil {
		return b, nil
	}
	if b, rawErr := base64.RawStdEncoding.DecodeString(s); rawErr == nil {
		return b, nil
	}
	return nil, fmt.Errorf("acpclient: terminal output is not base64: %w", err)
}

// Kind methods.
func (*TerminalUpdate) Kind() string      { return UpdateTerminal }
func (*TerminalOutputChunk) Kind() string { return UpdateTerminalOutputChunk }

// MarshalJSON methods: each variant encodes with its discriminator.
func (u *TerminalUpdate) MarshalJSON() ([]byte, error) {
	type fields TerminalUpdate
	return marshalUpdate(u.Kind(), (*fields)(u))
}
func (c *TerminalOutputChunk) MarshalJSON() ([]byte, error) {
	type fields TerminalOutputChunk
	return marshalUpdate(c.Kind(), (*fields)(c))
}
