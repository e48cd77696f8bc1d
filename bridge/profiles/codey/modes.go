package codey

import (
	"slices"
	"strings"

	"github.com/acphost/acphost/bridge"
)

// modes is Codey's mode table. Codey is not installable here, so it comes
// from Codey's ACP plan (the T3 Code integration), not from a probe: Codey
// has no session modes, its authority is chosen at launch. Permission mode
// default asks before every mutating tool; acceptEdits approves edits
// unasked and auto approves all but what its policy will not remember;
// --always-approve sends no request at all. An escalation the app chose in
// Options is its consent in host Build; one in extra arguments asks for
// consent.
var modes = &bridge.ModeTable{
	LaunchEscalation: launchEscalation,
	Source:           "Codey ACP plan (--permission-mode default|acceptEdits|auto, --always-approve), not probed",
}

// autoPermissionModes are the permission modes that approve some tools
// without asking.
var autoPermissionModes = []string{"acceptEdits", "auto"}

// launchEscalation returns the flag with which a launch starts Codey acting
// unasked, or "". Extra arguments are read too: Codey scans its whole
// command line for the flags.
func launchEscalation(lo bridge.LaunchOptions) string {
	if o, err := bridge.VendorOptions[Options](lo); err == nil {
		if o.AlwaysApprove {
			return "--always-approve"
		}
		if m := permissionMode(o); slices.Contains(autoPermissionModes, m) {
			return "--permission-mode " + m
		}
	}
	for i, a := range lo.ExtraArgs {
		if a == "--always-approve" {
			return a
		}
		m, ok := strings.CutPrefix(a, "--permission-mode=")
		if !ok && a == "--permission-mode" && i+1 < len(lo.ExtraArgs) {
			m, ok = lo.ExtraArgs[i+1], true
		}
		if ok && slices.Contains(autoPermissionModes, m) {
			return "--permission-mode " + m
		}
	}
	return ""
}
