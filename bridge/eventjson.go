package bridge

import (
	"encoding/json"
	"errors"

	"github.com/acphost/acphost/acpclient"
)

// EventError is the error of an Event read back from JSON (a journal, a
// subscriber's stream, acprun --events): the failure's text and, when the
// agent answered with a JSON-RPC error, its code. An Event's Err decodes as
// an *EventError; errors.As finds it.
type EventError struct {
	// Message is the error's text, Err.Error() of the event that was
	// encoded.
	Message string `json:"message"`
	// Code is the JSON-RPC error code the agent answered with (an
	// *acpclient.Error in the encoded error's chain), or 0 when the failure
	// was not an agent's error answer.
	Code int `json:"code,omitempty"`
}

// Error returns the message.
func (e *EventError) Error() string { return e.Message }

// eventErrorOf is err as an Event's JSON carries it.
func eventErrorOf(err error) *EventError {
	if err == nil {
		return nil
	}
	e := &EventError{Message: err.Error()}
	var rpc *acpclient.Error
	var decoded *EventError
	switch {
	case errors.As(err, &rpc):
		e.Code = rpc.Code
	case errors.As(err, &decoded):
		e.Code = decoded.Code
	}
	return e
}

// eventFields is Event without its methods, so that encoding/json handles
// the tagged fields and the methods below add only the error.
type eventFields Event

// eventJSON is the JSON form of an Event: its tagged fields, then the error.
type eventJSON struct {
	eventFields
	Error *EventError `json:"error,omitempty"`
}

// MarshalJSON encodes the event in its one JSON form (see the package doc,
// "Event JSON"): the tagged fields, and Err as an EventError object.
// json.Marshal checks and copies what a MarshalJSON returns, so a writer of
// many events does better with AppendJSON, which gives the same bytes.
func (e Event) MarshalJSON() ([]byte, error) { return e.AppendJSON(nil) }

// AppendJSON appends the event's one JSON form to b, the bytes
// json.Marshal writes, encoding it once: text, thinking and user-text
// deltas (the bulk of a stream) are written directly, other events
// through encoding/json.
func (e *Event) AppendJSON(b []byte) ([]byte, error) {
	if out, ok := appendDeltaJSON(b, e); ok {
		return out, nil
	}
	return e.appendGeneralJSON(b)
}

// appendGeneralJSON is AppendJSON through encoding/json.
func (e *Event) appendGeneralJSON(b []byte) ([]byte, error) {
	fields := eventFields(*e)
	fields.mergedText = nil
	out, err := json.Marshal(eventJSON{fields, eventErrorOf(e.Err)})
	if err != nil {
		return b, err
	}
	if b == nil {
		return out, nil
	}
	return append(b, out...), nil
}

// UnmarshalJSON decodes the JSON form back into an Event equal to the one
// encoded, except that Err becomes an *EventError and requests become
// records (see ErrRequestRecord).
func (e *Event) UnmarshalJSON(data []byte) error {
	var j eventJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return err
	}
	*e = Event(j.eventFields)
	if j.Error != nil {
		e.Err = j.Error
	}
	return nil
}

// makeRecord turns a zero userRequest into that of a decoded request:
// already done, never answerable.
func (r *userRequest) makeRecord() {
	r.done, r.record = make(chan struct{}), true
	close(r.done)
}

// UnmarshalJSON decodes a permission request as a record: its data, with
// Done closed; Allow and Reject return ErrRequestRecord.
func (r *PermissionRequest) UnmarshalJSON(data []byte) error {
	var f struct {
		ID      string                       `json:"id"`
		Tool    *ToolCall                    `json:"tool"`
		Options []acpclient.PermissionOption `json:"options"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		return err
	}
	*r = PermissionRequest{ID: f.ID, Tool: f.Tool, Options: f.Options,
		allow:  chooseOption(f.Options, acpclient.PermissionAllowOnce),
		reject: chooseOption(f.Options, acpclient.PermissionRejectOnce)}
	r.makeRecord()
	return nil
}

// UnmarshalJSON decodes a question as a record: its data, with Done
// closed; Accept, Decline and Cancel return ErrRequestRecord.
func (r *ElicitationRequest) UnmarshalJSON(data []byte) error {
	var f struct {
		ID            string          `json:"id"`
		Message       string          `json:"message"`
		Mode          string          `json:"mode"`
		Schema        json.RawMessage `json:"schema"`
		URL           string          `json:"url"`
		ElicitationID string          `json:"elicitationId"`
		ToolCallID    string          `json:"toolCallId"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		return err
	}
	*r = ElicitationRequest{ID: f.ID, Message: f.Message, Mode: f.Mode, Schema: f.Schema,
		URL: f.URL, ElicitationID: f.ElicitationID, ToolCallID: f.ToolCallID}
	r.makeRecord()
	return nil
}

// UnmarshalJSON decodes a sign-in request as a record: its data, with Done
// closed; Answer and Decline return ErrRequestRecord.
func (r *AuthRequest) UnmarshalJSON(data []byte) error {
	var f struct {
		ID      string       `json:"id"`
		Call    string       `json:"call"`
		Message string       `json:"message"`
		Methods []AuthOption `json:"methods"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		return err
	}
	*r = AuthRequest{ID: f.ID, Call: f.Call, Message: f.Message, Methods: f.Methods}
	r.makeRecord()
	return nil
}
