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

// permissionAnswer is the policy's rule for a permission request: the
// answer it gives without asking the app and the rule's name (for the
// decision event), or nil and "" when the app decides (Build). Ask, Plan
// and the read-only policy cancel; Full selects the allow-once option, and
// cancels when there is no usable one (none, or its id is ambiguous): it
// never picks "always", nor rejects on its own. It is the one place the
// rule and its name are written.
func (p Policy) permissionAnswer(options []acpclient.PermissionOption) (*acpclient.RequestPermissionResponse, string) {
	if p.ReadOnly {
		return acpclient.PermissionCancelled(), "read-only tool policy"
	}
	switch ParseMode(string(p.Mode)) {
	case ModeAsk:
		return acpclient.PermissionCancelled(), "Ask mode cancels permission requests"
	case ModePlan:
		return acpclient.PermissionCancelled(), "Plan mode cancels permission requests"
	case ModeFull:
		if allow := chooseOption(options, acpclient.PermissionAllowOnce); allow.id != "" {
			return acpclient.PermissionSelected(allow.id), "Full mode allows once"
		}
		return acpclient.PermissionCancelled(), "Full mode cancels without a usable allow-once option"
	}
	return nil, ""
}

// writeRefusal returns why the policy refuses file writes ("Ask mode",
// "Plan mode", "read-only tool policy"), or "" when it allows them. It is
// the one rule of a session's write gate (see sessionFiles.applyWriteGateLocked).
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
