package bridge

import (
	"encoding/json"
	"slices"
	"sync"

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

// urlElicitationsKept bounds the url elicitations a bridge remembers for
// their completion: an agent that never completes them cannot grow it.
const urlElicitationsKept = 64

// urlElicitations are the url elicitations of one agent connection that
// the agent may still report complete, oldest first.
type urlElicitations struct {
	mu      sync.Mutex
	waiting []urlElicitation
}

type urlElicitation struct {
	q *ElicitationRequest
	s *Session // nil outside any session
}

func (u *urlElicitations) add(q *ElicitationRequest, s *Session) {
	if q.Mode != "url" || q.ElicitationID == "" {
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.waiting) == urlElicitationsKept {
		u.waiting = slices.Delete(u.waiting, 0, 1)
	}
	u.waiting = append(u.waiting, urlElicitation{q, s})
}

func (u *urlElicitations) take(id string) (urlElicitation, bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	i := slices.IndexFunc(u.waiting, func(w urlElicitation) bool { return w.q.ElicitationID == id })
	if i < 0 {
		return urlElicitation{}, false
	}
	w := u.waiting[i]
	u.waiting = slices.Delete(u.waiting, i, i+1)
	return w, true
}
