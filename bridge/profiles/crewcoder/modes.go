package crewcoder

import (
	"strings"

	"github.com/acphost/acphost/bridge"
)

// modes is CrewCoder's mode table. CrewCoder is not installable here, so it
// comes from CrewCoder's provider documentation (CrewCode's CrewCoder page),
// not from a probe: its authority is chosen at launch by --approval, and
// Never, FullAccess and Sandboxed emit no approval requests at all, so the
// host's policy cannot interpose on the calls they run. Review and Always
// ask. Its agent profiles (--mode) shape behaviour, not approval. An
// escalating approval the app chose in Options is its consent in host
// Build (seed 000's approval picker offers Full access under the Build a
// concrete profile locks); the session then reports agent-autonomous,
// never Build-protected. One in extra arguments asks for consent.
var modes = &bridge.ModeTable{
	LaunchEscalation: launchEscalation,
	Source:           "CrewCoder provider docs (--approval review|always|never|full-access|sandboxed), not probed",
}

// launchEscalation returns the --approval flag with which a launch starts
// CrewCoder acting unasked, or "". Extra arguments are read too, and any
// escalating --approval among them counts, whichever CrewCoder would honour.
func launchEscalation(o bridge.LaunchOptions) string {
	policies := approvalArgs(o.ExtraArgs)
	if opts, err := bridge.VendorOptions[Options](o); err == nil {
		policies = append([]string{Approval(opts.Approval)}, policies...)
	}
	for _, p := range policies {
		switch p {
		case Never, FullAccess, Sandboxed:
			return "--approval " + p
		}
	}
	return ""
}

// approvalArgs returns the values of --approval in args, in either form.
func approvalArgs(args []string) []string {
	var values []string
	for i, a := range args {
		if v, ok := strings.CutPrefix(a, "--approval="); ok {
			values = append(values, strings.TrimSpace(v))
		} else if a == "--approval" && i+1 < len(args) {
			values = append(values, strings.TrimSpace(args[i+1]))
		}
	}
	return values
}
