package bridge

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/acphost/acphost/acpclient"
)

// Authority says whether the host can interpose on what a session's agent
// does: whether the host's policy answers before the agent acts. An agent's
// own tools write files and run commands without fs/* or terminal/* calls,
// so the host's Mode only binds an agent that asks first; Authority is how
// an app learns whether this one does.
type Authority string

// Authority states.
const (
	// AuthorityProtected: the agent is in a mode that asks before it acts
	// (its table says so), so the host's policy answers every action.
	AuthorityProtected Authority = "protected"
	// AuthorityAgentAutonomous: the agent acts without asking, in a mode or
	// with a launch flag, and the app allowed it: by putting the host in
	// ModeFull, or in ModeBuild by its consent (Session.GrantAutonomy, or
	// an escalation it chose in the vendor launch options). Otherwise the
	// session is Blocked.
	AuthorityAgentAutonomous Authority = "agent-autonomous"
	// AuthorityUnknown: the host does not know the agent's modes (no table
	// for it, or a mode its table does not list), so it cannot tell whether
	// the agent asks before it acts. Never read it as protected. It is
	// reported, not refused, unless the policy is Strict.
	AuthorityUnknown Authority = "unknown"
)

// ModeTable is what a profile knows about its agent's own session modes and
// config options: which let it act without asking, which only plan, and
// which ask before every action. It is data, learned by probing the real
// agent (the ids come back in session/new), and kept next to the profile;
// an app supplies one for an agent without a profile (Config.AgentModes).
type ModeTable struct {
	// Asking is the agent mode in which the agent asks before every action
	// that changes anything; the bridge moves the agent there when the host
	// mode forbids acting unasked. "" means the agent has no such mode.
	Asking string
	// Plan is the agent's own planning (read-only) mode, used in host Plan;
	// "" means it has none.
	Plan string
	// Safe lists other modes that still ask before acting (Asking and Plan
	// need not be repeated).
	Safe []string
	// Auto lists the modes that act without asking (auto-approved edits,
	// commands, or everything).
	Auto []string
	// Options are the agent's config options whose values decide whether it
	// asks; options not listed do not.
	Options []OptionRule
	// LaunchEscalation reports the launch flag, if any, with which the
	// launch options start the agent acting without asking (an approval
	// flag such as --approval full-access); "" means none. Nil means the profile has no
	// such flags. When it reports one for the vendor options alone
	// (LaunchOptions{Vendor: o.Vendor}), the app chose the escalation
	// explicitly (through its profile's typed options), which counts
	// as its consent in host Build; extra arguments, an agent mode or
	// anything defaulted never do.
	LaunchEscalation func(o LaunchOptions) (flag string)
	// Learn, if set, reads the agent's own configuration where it lives,
	// on the agent's host (fsys, whose home directory is home; cwd is the
	// session's), and returns the table it makes of the agent's modes
	// (the session reports them; modes is what the agent offers), or nil
	// to keep this one. Where that configuration decides whether the
	// agent asks (per-mode agent specs, a permissions file), an
	// agent configured to ask is protected. It runs when a session opens
	// (a profile's launch gives fsys and home, LaunchOptions.HostFS and
	// HostHome; a bridge started without one reads this machine); an
	// error keeps this table and is reported in the state's Reason.
	Learn func(ctx context.Context, fsys HostFS, home, cwd string, modes []acpclient.Mode) (*ModeTable, error)
	// Source says where the table was learned (agent and version probed),
	// for the record.
	Source string
}

// OptionRule is a ModeTable's rule for one config option.
type OptionRule struct {
	// ID is the config option's id.
	ID string
	// Asking is the value that asks before acting ("" for a boolean option
	// whose false value asks).
	Asking string
	// Plan is the value that only plans, if any.
	Plan string
	// Safe lists other values that still ask.
	Safe []string
	// Auto lists the values that act without asking; for a boolean option,
	// "true" when true auto-approves.
	Auto []string
}

// AuthorityState is what a session reports about its authority
// (Session.Authority, the authority event): the state, why, and what
// decided it.
type AuthorityState struct {
	// State is protected, agent-autonomous or unknown.
	State Authority `json:"state"`
	// Reason says why, in words for the user ("agent mode \"default\" asks
	// before acting", "no mode table for this agent").
	Reason string `json:"reason,omitempty"`
	// HostMode and ReadOnly are the session's policy the state was judged
	// under.
	HostMode Mode `json:"hostMode"`
	ReadOnly bool `json:"readOnly,omitempty"`
	// AgentMode is the agent's current session mode ("" when it reports
	// none).
	AgentMode string `json:"agentMode,omitempty"`
	// Option and Value name the config option whose value decided the
	// state, when one did.
	Option string `json:"option,omitempty"`
	Value  string `json:"value,omitempty"`
	// Flag is the launch flag that makes the agent act without asking
	// (ModeTable.LaunchEscalation), when the launch has one.
	Flag string `json:"flag,omitempty"`
	// Blocked: the host's policy does not allow this state and the agent
	// could not be moved out of it, so the session refuses prompts (with an
	// *AuthorityError) until a change makes it safe.
	Blocked bool `json:"blocked,omitempty"`
	// ConsentNeeded: Blocked in host Build only because the app has not
	// consented to an agent that acts without asking and cannot be moved;
	// Session.GrantAutonomy consents and unblocks it. Ask the user, as a
	// CLI asks before a dangerous choice.
	ConsentNeeded bool `json:"consentNeeded,omitempty"`
}

// Errors an *AuthorityError wraps, for errors.Is.
var (
	// ErrAgentAutonomous: the agent's mode, a config option or a launch
	// flag lets it act without asking, which the host's mode does not
	// allow.
	ErrAgentAutonomous = errors.New("bridge: the agent would act without asking")
	// ErrAgentModeUnknown: the agent's mode or an option's value is not in
	// its mode table, so the host cannot tell whether it asks; under a
	// Strict policy outside ModeFull that is refused like an autonomous
	// one.
	ErrAgentModeUnknown = errors.New("bridge: the agent's mode is not in its mode table")
)

// AuthorityError is why a session refuses a prompt, an agent mode or a
// config option, or why a launch is refused: the host's mode does not
// allow what the agent would do unasked. It wraps ErrAgentAutonomous or
// ErrAgentModeUnknown, and Cause when the agent could not be moved.
type AuthorityError struct {
	// HostMode and ReadOnly are the session's policy.
	HostMode Mode
	ReadOnly bool
	// AgentMode, Option and Value, or Flag, name what is not allowed.
	AgentMode string
	Option    string
	Value     string
	Flag      string
	// Err is ErrAgentAutonomous or ErrAgentModeUnknown.
	Err error
	// Cause is why the agent could not be moved to a mode that asks (no
	// such mode, or the agent refused), when it was tried.
	Cause error

	consent bool // host Build refuses only until the app consents
}

// Error names the host mode, what the agent would use, and why it could not
// be moved.
func (e *AuthorityError) Error() string {
	why := "it acts without asking"
	if errors.Is(e.Err, ErrAgentModeUnknown) {
		why = "its mode table does not list it"
	}
	msg := fmt.Sprintf("bridge: %s does not allow %s (%s)", hostLabel(e.HostMode, e.ReadOnly),
		subjectLabel(e.AgentMode, e.Option, e.Value, e.Flag), why)
	if e.Cause != nil {
		msg += "; the agent could not be moved: " + e.Cause.Error()
	}
	if e.consent {
		msg += "; it runs only with the app's consent (Session.GrantAutonomy)"
	}
	return msg
}

// Unwrap returns the sentinel and the cause.
func (e *AuthorityError) Unwrap() []error {
	if e.Cause == nil {
		return []error{e.Err}
	}
	return []error{e.Err, e.Cause}
}

// hostLabel names a policy in messages: "host mode ask", "the read-only
// tool policy".
func hostLabel(m Mode, readOnly bool) string {
	if readOnly {
		return "the read-only tool policy"
	}
	return "host mode " + string(ParseMode(string(m)))
}

// subjectLabel names what decided a state in messages.
func subjectLabel(mode, option, value, flag string) string {
	switch {
	case flag != "":
		return fmt.Sprintf("launch flag %q", flag)
	case option != "":
		return fmt.Sprintf("config option %q = %q", option, value)
	case mode == "":
		return "an agent that reports no mode"
	}
	return fmt.Sprintf("agent mode %q", mode)
}

// Check reports a table that contradicts itself: a mode or option value
// listed both as auto-approving and as asking, planning or safe.
func (t *ModeTable) Check() error {
	var errs []error
	if dup := overlap(t.Auto, append([]string{t.Asking, t.Plan}, t.Safe...)); dup != "" {
		errs = append(errs, fmt.Errorf("mode %q is both auto and asking", dup))
	}
	for _, r := range t.Options {
		if dup := overlap(r.Auto, append([]string{r.Asking, r.Plan}, r.Safe...)); dup != "" {
			errs = append(errs, fmt.Errorf("option %q: value %q is both auto and asking", r.ID, dup))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("bridge: mode table %s: %w", t.Source, errors.Join(errs...))
	}
	return nil
}

// overlap returns the first non-empty value of auto that safe also holds.
func overlap(auto, safe []string) string {
	for _, a := range auto {
		if a != "" && slices.Contains(safe, a) {
			return a
		}
	}
	return ""
}
