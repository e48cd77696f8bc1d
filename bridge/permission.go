package bridge

import (
	"errors"
	"sync"

	"github.com/acphost/acphost/acpclient"
)

// ErrAlreadyAnswered is returned when a permission request was answered
// before (by the app, by a cancel, or by the agent abandoning it).
var ErrAlreadyAnswered = errors.New("bridge: permission request already answered")

// PermissionRequest is a tool call waiting for the app's decision (Build
// mode). Answer it with Allow or Reject, from any goroutine. Only the
// once-options are ever chosen: an agent that is told "always" stops asking,
// and the host's current mode must stay authoritative.
type PermissionRequest struct {
	// ID identifies the request within its Bridge.
	ID string `json:"id"`
	// Tool is the tool call asking, as the bridge knows it.
	Tool *ToolCall `json:"tool"`
	// Options are the choices the agent offered, for display.
	Options []acpclient.PermissionOption `json:"options"`

	allowID, rejectID string
	once              sync.Once
	done              chan struct{}
	answer            func(*acpclient.RequestPermissionResponse)
}

func newPermissionRequest(id string, tool *ToolCall, options []acpclient.PermissionOption, answer func(*acpclient.RequestPermissionResponse)) *PermissionRequest {
	r := &PermissionRequest{ID: id, Tool: tool, Options: options, done: make(chan struct{}), answer: answer}
	r.allowID = optionOfKind(options, acpclient.PermissionAllowOnce)
	r.rejectID = optionOfKind(options, acpclient.PermissionRejectOnce)
	return r
}

// optionOfKind returns the id of the first option of the given kind. Kinds
// are matched exactly: an unknown kind is never taken for approval.
func optionOfKind(options []acpclient.PermissionOption, kind string) string {
	for _, o := range options {
		if o.Kind == kind {
			return o.OptionID
		}
	}
	return ""
}

// CanAllow reports whether the agent offered an allow-once option.
func (r *PermissionRequest) CanAllow() bool { return r.allowID != "" }

// Allow answers with the agent's allow-once option. Without one, the
// request is answered "cancelled" (never with allow-always) and an error
// says so.
func (r *PermissionRequest) Allow() error {
	if r.allowID == "" {
		r.settle(acpclient.PermissionCancelled())
		return errors.New("bridge: the agent offered no allow-once option; request cancelled")
	}
	return r.settle(acpclient.PermissionSelected(r.allowID))
}

// Reject answers with the agent's reject-once option, or "cancelled" when it
// offered none.
func (r *PermissionRequest) Reject() error {
	if r.rejectID == "" {
		return r.settle(acpclient.PermissionCancelled())
	}
	return r.settle(acpclient.PermissionSelected(r.rejectID))
}

// Done is closed once the request has been answered in any way.
func (r *PermissionRequest) Done() <-chan struct{} { return r.done }

// cancel answers "cancelled" (turn cancelled or agent gave up).
func (r *PermissionRequest) cancel() { r.settle(acpclient.PermissionCancelled()) }

func (r *PermissionRequest) settle(resp *acpclient.RequestPermissionResponse) error {
	err := ErrAlreadyAnswered
	r.once.Do(func() {
		err = nil
		r.answer(resp)
		close(r.done)
	})
	return err
}
