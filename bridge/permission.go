package bridge

import (
	"errors"
	"fmt"
	"strings"
	"unicode"

	"github.com/acphost/acphost/acpclient"
)

// Errors of PermissionRequest's answers (besides ErrAlreadyAnswered).
var (
	// ErrNoAllowOption is returned by Allow when the agent offered no
	// allow-once option; the request was answered "cancelled".
	ErrNoAllowOption = errors.New("bridge: the agent offered no allow-once option; request cancelled")
	// ErrAmbiguousOption is returned by Allow or Reject when any option has
	// an empty id, or an option of the kind they select has an id another
	// option shares (ignoring case and surrounding space): selecting it could
	// mean either, so the request was answered "cancelled" instead.
	ErrAmbiguousOption = errors.New("bridge: the agent's option id is ambiguous; request cancelled")
)

// PermissionRequest is a tool call waiting for the app's decision (Build
// mode). Answer it with Allow or Reject, from any goroutine. Only the
// once-options are ever chosen: an agent that is told "always" stops asking,
// and the host's current mode must stay authoritative. An answer names one
// option by its id, so an id is used only when no other option has it, even
// up to case and surrounding space, and only when no option's id is empty;
// when the option to choose is ambiguous the request is cancelled. A
// cancelled or ended turn, Bridge.Close and the agent giving up answer it
// "cancelled"; Done closes on any answer. The session's current policy and
// authority govern it while it waits: once they answer it by themselves
// (SetPolicy to Ask, Plan, read-only or Full; a blocked authority cancels),
// Allow and Reject send nothing and return an error wrapping
// ErrAlreadyAnswered that names the rule.
type PermissionRequest struct {
	userRequest

	// ID identifies the request within its Bridge.
	ID string `json:"id"`
	// Tool is the tool call asking, as the bridge knows it.
	Tool *ToolCall `json:"tool"`
	// Options are the choices the agent offered, for display.
	Options []acpclient.PermissionOption `json:"options"`

	allow, reject optionChoice
	answer        func(*acpclient.RequestPermissionResponse)
	// ruling is how the session's rules answer the request by themselves
	// now (Session.ruling); nil for one they answered at once.
	ruling func(*PermissionRequest) (*acpclient.RequestPermissionResponse, string)
}

func newPermissionRequest(id string, tool *ToolCall, options []acpclient.PermissionOption, answer func(*acpclient.RequestPermissionResponse)) *PermissionRequest {
	r := &PermissionRequest{userRequest: newUserRequest(), ID: id, Tool: tool, Options: options, answer: answer}
	r.allow = chooseOption(options, acpclient.PermissionAllowOnce)
	r.reject = chooseOption(options, acpclient.PermissionRejectOnce)
	return r
}

// CanAllow reports whether Allow would select an option: the agent offered
// an allow-once option whose id is unambiguous.
func (r *PermissionRequest) CanAllow() bool { return r.allow.id != "" }

// Allow answers with the agent's allow-once option. Without one, the
// request is answered "cancelled" (never with allow-always) and the error
// is ErrNoAllowOption; when its id is ambiguous, also "cancelled", with
// ErrAmbiguousOption.
func (r *PermissionRequest) Allow() error {
	if err := r.governs(); err != nil {
		return err
	}
	switch {
	case r.allow.ambiguous:
		return r.cancelWith(ErrAmbiguousOption, "ambiguous allow-once option id")
	case r.allow.id == "":
		return r.cancelWith(ErrNoAllowOption, "no allow-once option")
	}
	return r.selectOption(r.allow.id, outcomeAllowed, Decision{By: byApp})
}

// Reject answers with the agent's reject-once option, or "cancelled" when it
// offered none (which refuses just as well). When the reject-once option's
// id is ambiguous the answer is "cancelled" too and the error is
// ErrAmbiguousOption.
func (r *PermissionRequest) Reject() error {
	if err := r.governs(); err != nil {
		return err
	}
	switch {
	case r.reject.ambiguous:
		return r.cancelWith(ErrAmbiguousOption, "ambiguous reject-once option id")
	case r.reject.id == "":
		return r.cancel(Decision{By: byApp, Rule: "no reject-once option"})
	}
	return r.selectOption(r.reject.id, outcomeRejected, Decision{By: byApp})
}

// Permission outcomes (Decision.Outcome).
const (
	outcomeAllowed   = "allowed"
	outcomeRejected  = "rejected"
	outcomeCancelled = "cancelled"
)

// cancelWith answers "cancelled" for the app and returns why, or
// ErrAlreadyAnswered.
func (r *PermissionRequest) cancelWith(why error, rule string) error {
	if err := r.cancel(Decision{By: byApp, Rule: rule}); err != nil {
		return err
	}
	return why
}

// abandon answers "cancelled" (turn cancelled or ended, bridge closed,
// agent gave up).
func (r *PermissionRequest) abandon(cause error) { r.cancel(hostDecision(outcomeCancelled, cause)) }

// cancel answers "cancelled" and reports d.
func (r *PermissionRequest) cancel(d Decision) error {
	d.Outcome = outcomeCancelled
	return r.settle(d, acpclient.PermissionCancelled())
}

// selectOption answers with option id and reports d with outcome.
func (r *PermissionRequest) selectOption(id, outcome string, d Decision) error {
	d.Outcome, d.OptionID = outcome, id
	return r.settle(d, acpclient.PermissionSelected(id))
}

func (r *PermissionRequest) settle(d Decision, resp *acpclient.RequestPermissionResponse) error {
	d.Request, d.Type = r.ID, "permission"
	return r.userRequest.settle(d, func() { r.answer(resp) })
}

// optionChoice is the option an answer of one kind selects: its id, or
// ambiguous when that kind cannot be named safely.
type optionChoice struct {
	id        string
	ambiguous bool
}

// chooseOption picks the option of the given kind. Kinds are matched
// exactly: an unknown kind is never taken for approval. An id is usable only
// when no other option's id equals it once trimmed and case-folded, since an
// agent that compares ids loosely could read the answer as another option (a
// reject sharing an id with an allow approves). If any option has an empty
// id (as one that failed to decode, a number say, does) every choice is
// ambiguous, and so is one of the kind whose id is shared.
func chooseOption(options []acpclient.PermissionOption, kind string) optionChoice {
	holders := make(map[string]int, len(options))
	for _, o := range options {
		key := normalOptionID(o.OptionID)
		if key == "" {
			return optionChoice{ambiguous: true}
		}
		holders[key]++
	}
	var c optionChoice
	for _, o := range options {
		if o.Kind != kind {
			continue
		}
		if holders[normalOptionID(o.OptionID)] != 1 {
			return optionChoice{ambiguous: true}
		}
		if c.id == "" {
			c.id = o.OptionID
		}
	}
	return c
}

// normalOptionID is the form under which two option ids count as the same:
// surrounding space trimmed, each rune replaced by the smallest rune of its
// Unicode case-folding orbit (so ids equal under strings.EqualFold match).
func normalOptionID(id string) string {
	var b strings.Builder
	for _, r := range strings.TrimSpace(id) {
		least := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			least = min(least, f)
		}
		b.WriteRune(least)
	}
	return b.String()
}

// governs returns the error for an answer of the app to pr while the
// session's rules answer it by themselves, after settling it by them; nil
// when the app decides.
func (pr *PermissionRequest) governs() error {
	if pr.ruling == nil {
		return nil
	}
	resp, rule := pr.ruling(pr)
	if resp == nil {
		return nil
	}
	pr.settleByRule(resp, rule) // normally done already, when the rules changed
	return fmt.Errorf("%w: the session's rules decide it now (%s); the app's answer was not sent", ErrAlreadyAnswered, rule)
}

// settleByRule answers pr with resp, the rules' own answer, unless it was
// answered before.
func (pr *PermissionRequest) settleByRule(resp *acpclient.RequestPermissionResponse, rule string) {
	d := Decision{By: byPolicy, Rule: rule}
	if resp.Outcome.OptionID != "" {
		pr.selectOption(resp.Outcome.OptionID, outcomeAllowed, d)
	} else {
		pr.cancel(d)
	}
}
