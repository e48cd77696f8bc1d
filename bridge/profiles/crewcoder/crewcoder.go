package crewcoder

import (
	"slices"
	"strings"

	"github.com/acphost/acphost/bridge"
)

// CrewCoder's native approval policies (Options.Approval).
const (
	Review     = "review" // the default: safe calls run, mutations and dangerous calls ask
	Always     = "always"
	Never      = "never"
	FullAccess = "full-access" // no requests at all: the host's policy cannot interpose
	Sandboxed  = "sandboxed"
)

// Options are CrewCoder's own launch options, given as
// bridge.LaunchOptions.Vendor (a value or a pointer; nil means the
// defaults). CrewCoder's agent profile (--mode) is the generic
// bridge.LaunchOptions.AgentMode.
type Options struct {
	// Approval is CrewCoder's native approval policy: Review (default),
	// Always, Never, FullAccess or Sandboxed; anything else means Review.
	Approval string
}

// ApprovalPolicy returns the approval policy as chosen, for the session
// store (bridge.ApprovalPolicyOption).
func (o Options) ApprovalPolicy() string { return o.Approval }

// AgentProfiles are the values CrewCoder's --mode takes. They are
// CrewCoder's agent profiles, unrelated to the host's Ask/Plan/Build/Full.
var AgentProfiles = []string{"general", "crewcoder", "plugin", "extension"}

// Approval returns the approval policy to pass for a persisted or chosen
// value: one of the five policies, anything else (missing, old, invalid)
// failing closed to Review.
func Approval(v string) string {
	switch v = strings.TrimSpace(v); v {
	case Review, Always, Never, FullAccess, Sandboxed:
		return v
	}
	return Review
}

// AgentProfile returns the --mode value for a choice, or "" for the
// configured default (also for anything that is not a CrewCoder profile,
// the host's own modes included).
func AgentProfile(v string) string {
	v = strings.TrimSpace(v)
	if slices.Contains(AgentProfiles, v) {
		return v
	}
	return ""
}

// Profile runs "crewcoder acp --approval POLICY [--mode PROFILE]": the
// approval policy from Options, the agent profile from
// bridge.LaunchOptions.AgentMode (AgentProfiles; the profile takes them at
// launch, see bridge.Profile.TakesAgentMode).
// A concrete agent profile locks the host's execution mode to Build: the
// profile owns the agent's behaviour, and Build keeps the host's permission
// gate for what the approval policy still asks. Change the profile or the
// approval policy with bridge.Bridge.Relaunch. Its mode table reports
// Never, FullAccess and Sandboxed as launch escalations: they send no
// approval requests, so the host's policy cannot interpose. Chosen in
// Options they are the app's consent under Build, and the session reports
// agent-autonomous; in Ask, Plan or read-only they are refused.
// CrewCoder's vendor protocol is mapped as follows: usage from _meta["crewcoder/usage"], tool identity from
// _meta["crewcoder/tool"].name (then ACP's name, then a title that is a bare
// identifier, see bridge.IdentifierTitle), _crewcoder/compaction_update (a session
// update kind, and a notification in older builds) as the only source of
// compaction events, directory grants through
// session/set_external_directories, effort through
// session/set_reasoning_effort, bridge.Session.Steer through session/follow_up,
// bridge.Session.Compact through session/compact when initialize advertises it
// (the session keeps its id), and Task* tool results as todos events.
var Profile = &bridge.Profile{
	Name: "crewcoder", Title: "CrewCoder",
	EnvNames:          []string{"CREWCODER_*"},
	Binaries:          []string{"crewcoder"},
	Args:              args,
	AgentModeAtLaunch: func(mode string) bool { return AgentProfile(mode) != "" },
	NewProvider:       newProvider,
	Modes:             modes,
}

func args(o bridge.LaunchOptions) ([]string, error) {
	opts, err := bridge.VendorOptions[Options](o)
	if err != nil {
		return nil, err
	}
	args := []string{"acp", "--approval", Approval(opts.Approval)}
	if p := AgentProfile(o.AgentMode); p != "" {
		args = append(args, "--mode", p)
	}
	return args, nil
}
