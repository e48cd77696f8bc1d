package bridge

import (
	"encoding/json"

	"github.com/acphost/acphost/acpclient"
)

// ElicitationRequest is a question the agent asks the user (Config
// ElicitationModes must offer its mode): a form to fill (Mode "form",
// Schema) or a URL to open (Mode "url"; show the full URL and ask before
// opening it). Answer with Accept, Decline or Cancel, from any goroutine;
// a cancelled or ended turn, Bridge.Close and the agent giving up cancel
// it. Done closes on any answer.
type ElicitationRequest struct {
	userRequest

	// ID identifies the request within its Bridge.
	ID      string `json:"id"`
	Message string `json:"message"`
	Mode    string `json:"mode"`
	// Schema is the form's flat JSON schema (form mode).
	Schema json.RawMessage `json:"schema,omitempty"`
	// URL and ElicitationID belong to url mode.
	URL           string `json:"url,omitempty"`
	ElicitationID string `json:"elicitationId,omitempty"`
	// ToolCallID is the tool call asking, when the agent says.
	ToolCallID string `json:"toolCallId,omitempty"`

	answer func(*acpclient.CreateElicitationResponse)
}

// Accept answers with the user's input (form fields by name; nil for url).
func (r *ElicitationRequest) Accept(content map[string]any) error {
	return r.settle(Decision{Outcome: "accepted", By: byApp}, &acpclient.CreateElicitationResponse{Action: "accept", Content: content})
}

// Decline answers that the user said no.
func (r *ElicitationRequest) Decline() error {
	return r.settle(Decision{Outcome: "declined", By: byApp}, &acpclient.CreateElicitationResponse{Action: "decline"})
}

// Cancel answers that the user dismissed the question.
func (r *ElicitationRequest) Cancel() error {
	return r.settle(Decision{Outcome: "cancelled", By: byApp}, &acpclient.CreateElicitationResponse{Action: "cancel"})
}

func (r *ElicitationRequest) abandon(cause error) {
	r.settle(hostDecision("cancelled", cause), &acpclient.CreateElicitationResponse{Action: "cancel"})
}

func (r *ElicitationRequest) settle(d Decision, resp *acpclient.CreateElicitationResponse) error {
	d.Request, d.Type = r.ID, "elicitation"
	return r.userRequest.settle(d, func() { r.answer(resp) })
}
