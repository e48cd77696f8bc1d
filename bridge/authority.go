package bridge

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
	// with a launch flag the app chose by putting the host in ModeFull.
	AuthorityAgentAutonomous Authority = "agent-autonomous"
	// AuthorityUnknown: the host does not know the agent's modes (no table
	// for it, or a mode its table does not list), so it cannot tell whether
	// the agent asks before it acts. Never read it as protected.
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
	// launch options start the agent acting without asking (CrewCoder's
	// --approval full-access); "" means none. Nil means the profile has no
	// such flags.
	LaunchEscalation func(o LaunchOptions) (flag string)
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
