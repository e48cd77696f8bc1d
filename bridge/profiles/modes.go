package profiles

import (
	"slices"
	"strings"

	"github.com/acphost/acphost/bridge"
)

// The mode tables of the plain ACP agents, learned by probing each real
// agent (initialize and session/new with a fresh HOME, a minimal
// environment and an offline fake model), with one write turn per mode to
// see which modes ask. The raw answers are in testdata/; TestModeTables
// checks every table against them. Where an agent mirrors its session
// modes in a "mode" config option, the table lists that option too, so a
// change made either way is judged the same.
var (
	// claudeModes: claude-agent-acp offers bypassPermissions only to a
	// process that is not root or has IS_SANDBOX set, and then its plan
	// mode runs Write unasked too (probed: the file was written, no
	// request); as root without IS_SANDBOX plan asks. The table cannot
	// tell which, so plan counts as auto and the agent has no plan mode
	// the host may use. dontAsk denies what is not pre-approved instead of
	// asking, so it never acts unasked.
	claudeModes = &bridge.ModeTable{
		Asking:  "default",
		Safe:    []string{"dontAsk"},
		Auto:    []string{"acceptEdits", "bypassPermissions", "plan"},
		Options: []bridge.OptionRule{{ID: "mode", Asking: "default", Safe: []string{"dontAsk"}, Auto: []string{"acceptEdits", "bypassPermissions", "plan"}}},
		Source:  "@zed-industries/claude-agent-acp 0.23.1, probed",
	}
	// codexModes: codex-acp's read-only preset asks before every edit and
	// command; "auto" edits the workspace and runs commands unasked, and
	// full-access does anything unasked. It has no planning mode.
	codexModes = &bridge.ModeTable{
		Asking:  "read-only",
		Auto:    []string{"auto", "full-access"},
		Options: []bridge.OptionRule{{ID: "mode", Asking: "read-only", Auto: []string{"auto", "full-access"}}},
		Source:  "@zed-industries/codex-acp 0.16.0, probed",
	}
	// geminiModes: Gemini CLI refuses autoEdit and yolo in a folder it does
	// not trust, but a trusted one (GEMINI_CLI_TRUST_WORKSPACE=true, or the
	// user's trustedFolders) writes unasked in both. It has no config
	// options.
	geminiModes = &bridge.ModeTable{
		Asking: "default", Plan: "plan",
		Auto:   []string{"autoEdit", "yolo"},
		Source: "@google/gemini-cli 0.61.0, probed",
	}
	// openCodeModes: OpenCode has no session modes, only a "mode" config
	// option choosing its agent. Its build agent follows OpenCode's
	// permission configuration, whose defaults let it edit and run
	// commands unasked (probed: the write happened without a request), so
	// build counts as auto; it has no asking value. When the user's or
	// the project's opencode.json makes it ask, build asks
	// (learnOpenCode).
	openCodeModes = &bridge.ModeTable{
		Options: []bridge.OptionRule{{ID: "mode", Plan: "plan", Auto: []string{"build"}}},
		Learn:   learnOpenCode,
		Source:  "opencode-ai 1.18.33, probed",
	}
	// qwenModes: Qwen Code's modes, mirrored in its "mode" config option.
	qwenModes = &bridge.ModeTable{
		Asking: "default", Plan: "plan",
		Auto:    []string{"auto-edit", "yolo"},
		Options: []bridge.OptionRule{{ID: "mode", Asking: "default", Plan: "plan", Auto: []string{"auto-edit", "yolo"}}},
		Source:  "@qwen-code/qwen-code 0.15.10, probed",
	}
	// copilotModes: Copilot CLI names its modes by URL; autopilot turns
	// allow_all on, and allow_all on approves every tool in any mode. Its
	// permission flags are launch escalations: with --allow-all-tools it
	// reports allow_all "off" and still writes unasked (probed), and with
	// --allow-all it keeps allow_all "on" whatever the client sets.
	copilotModes = &bridge.ModeTable{
		LaunchEscalation: copilotLaunchEscalation,
		Asking:           copilotMode + "agent", Plan: copilotMode + "plan",
		Auto: []string{copilotMode + "autopilot"},
		Options: []bridge.OptionRule{
			{ID: "mode", Asking: copilotMode + "agent", Plan: copilotMode + "plan", Auto: []string{copilotMode + "autopilot"}},
			{ID: "allow_all", Asking: "off", Auto: []string{"on"}},
		},
		Source: "@github/copilot 1.0.102, probed",
	}
)

// copilotMode is the prefix of Copilot CLI's mode ids.
const copilotMode = "https://agentclientprotocol.com/protocol/session-modes#"

// copilotEscalations are Copilot CLI's flags that approve tools, paths or
// URLs without asking.
var copilotEscalations = []string{"--allow-all", "--allow-all-tools", "--allow-all-paths", "--allow-all-urls", "--yolo"}

// copilotLaunchEscalation returns the first flag in the launch's extra
// arguments with which Copilot CLI acts unasked: one of
// copilotEscalations, or --allow-tool (each allowed tool runs unasked).
func copilotLaunchEscalation(o bridge.LaunchOptions) string {
	for _, a := range o.ExtraArgs {
		name, _, _ := strings.Cut(a, "=")
		if slices.Contains(copilotEscalations, name) || name == "--allow-tool" {
			return a
		}
	}
	return ""
}
