package kiro

import (
	"slices"
	"strings"

	"github.com/acphost/acphost/bridge"
)

// modes is kiro-cli's mode table. kiro-cli is not installable here, so it
// comes from Kiro's CLI documentation, not from a probe: only its read tool
// is trusted by default and every other tool asks, unless the launch trusts
// them (--trust-all-tools, or --trust-tools with a tool that changes
// something). Its agents (--agent) are its ACP modes: kiro_default asks,
// and each other agent's spec says whether it does, so the table is
// learned from the specs when a session opens (learn, agents.go). An
// agent without a spec is unknown. None of its agents is an asking mode
// the host may move a session to: an agent is the app's choice of
// behaviour, so one that acts unasked needs the app's consent in Build.
var modes = &bridge.ModeTable{
	LaunchEscalation: launchEscalation,
	Safe:             []string{defaultAgent},
	Learn:            learn,
	Source:           "Kiro CLI docs (tool permissions, agent specs, --trust-all-tools, --trust-tools), not probed",
}

// readOnlyTools are the kiro-cli tools that change nothing, under their old
// and new names; trusting only these is no escalation.
var readOnlyTools = []string{"read", "fs_read", "grep", "glob"}

// launchEscalation returns the trust flag in the launch's extra arguments
// with which kiro-cli runs tools that change things unasked, or "".
func launchEscalation(o bridge.LaunchOptions) string {
	for i, a := range o.ExtraArgs {
		if a == "--trust-all-tools" {
			return a
		}
		tools, ok := strings.CutPrefix(a, "--trust-tools=")
		if !ok && a == "--trust-tools" && i+1 < len(o.ExtraArgs) {
			tools, ok = o.ExtraArgs[i+1], true
		}
		if ok && trustsWrites(tools) {
			return "--trust-tools=" + tools
		}
	}
	return ""
}

// trustsWrites reports whether a --trust-tools list names a tool that is
// not read-only.
func trustsWrites(list string) bool {
	for _, tool := range strings.Split(list, ",") {
		if tool = strings.TrimSpace(tool); tool != "" && !slices.Contains(readOnlyTools, tool) {
			return true
		}
	}
	return false
}
