package bridge

import (
	"strings"

	"github.com/acphost/acphost/acpclient"
)

// Mode is the host's execution mode for a session: how much the agent may do
// without asking.
type Mode string

// Execution modes.
const (
	// ModeAsk: the agent may only read; permission requests are cancelled
	// and file writes refused.
	ModeAsk Mode = "ask"
	// ModePlan: like Ask, for planning turns.
	ModePlan Mode = "plan"
	// ModeBuild: the app decides each permission request (a permission Event
	// it answers). This is also what an empty or unknown mode means.
	ModeBuild Mode = "build"
	// ModeFull: permission requests are allowed once, automatically, and
	// cancelled when no usable allow-once option is offered.
	ModeFull Mode = "full"
)

// ParseMode reads a mode name; anything unknown fails closed to ModeBuild,
// which asks the app.
func ParseMode(s string) Mode {
	switch m := Mode(strings.ToLower(strings.TrimSpace(s))); m {
	case ModeAsk, ModePlan, ModeBuild, ModeFull:
		return m
	}
	return ModeBuild
}

// Policy is what a session may do: its Mode, and a read-only tool policy
// that overrides it.
type Policy struct {
	Mode Mode `json:"mode"`
	// ReadOnly refuses every permission request and file write, in any mode.
	ReadOnly bool `json:"readOnly,omitempty"`
	// Strict refuses prompts while the session's authority is unknown (an
	// agent mode or option value its mode table does not list), outside
	// ModeFull, as an agent known to act unasked is refused. Without it
	// unknown is only reported (see Authority).
	Strict bool `json:"strict,omitempty"`
}

// policyAnswer is how a policy answers a permission request.
type policyAnswer int

const (
	// decideAskApp: show the request to the app (Build).
	decideAskApp policyAnswer = iota
	// decideCancel: answer "cancelled" (Ask, Plan, read-only).
	decideCancel
	// decideAllowOnce: select the allow-once option (Full).
	decideAllowOnce
)

// permissionDecision applies the policy to a permission request.
func (p Policy) permissionDecision() policyAnswer {
	if p.ReadOnly {
		return decideCancel
	}
	switch ParseMode(string(p.Mode)) {
	case ModeAsk, ModePlan:
		return decideCancel
	case ModeFull:
		return decideAllowOnce
	}
	return decideAskApp
}

// automaticAnswer is the answer the decision gives without asking the app,
// or nil when the app decides. Full selects the allow-once option, and
// cancels when there is no usable one (none, or its id is ambiguous): it
// never picks "always", nor rejects on its own.
func (d policyAnswer) automaticAnswer(options []acpclient.PermissionOption) *acpclient.RequestPermissionResponse {
	switch d {
	case decideCancel:
		return acpclient.PermissionCancelled()
	case decideAllowOnce:
		if allow := chooseOption(options, acpclient.PermissionAllowOnce); allow.id != "" {
			return acpclient.PermissionSelected(allow.id)
		}
		return acpclient.PermissionCancelled()
	}
	return nil
}

// writeRefusal returns why the policy refuses file writes ("Ask mode",
// "Plan mode", "read-only tool policy"), or "" when it allows them. It is
// the one rule of a session's write gate (see Session.applyWriteGateLocked).
func (p Policy) writeRefusal() string {
	if p.ReadOnly {
		return "read-only tool policy"
	}
	switch ParseMode(string(p.Mode)) {
	case ModeAsk:
		return "Ask mode"
	case ModePlan:
		return "Plan mode"
	}
	return ""
}
