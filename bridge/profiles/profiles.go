package profiles

import (
	"slices"
	"strings"

	"github.com/acphost/acphost/bridge"
	"github.com/acphost/acphost/bridge/profiles/codey"
	"github.com/acphost/acphost/bridge/profiles/crewcoder"
	"github.com/acphost/acphost/bridge/profiles/kiro"
)

// The common ACP agents. They speak plain ACP; their differences are the
// program name and the flags that start ACP mode. Model selection goes
// through a model config option when the agent offers one and the legacy
// session/set_model otherwise (bridge.Session.SetModel), for all of them.
var (
	// Claude runs Zed's claude-agent-acp adapter for Claude Code.
	Claude = &bridge.Profile{
		Name: "claude", Aliases: []string{"claude-agent-acp", "claude-code-acp", "claude-code"}, Title: "Claude Code",
		EnvNames:    []string{"ANTHROPIC_*", "CLAUDE_CONFIG_DIR", "CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX", "CLAUDE_CODE_OAUTH_TOKEN"},
		Binaries:    []string{"claude-agent-acp", "claude-code-acp"},
		NewProvider: newClaudeProvider,
		Modes:       claudeModes,
	}
	// Codex runs Zed's codex-acp adapter for OpenAI Codex.
	Codex = &bridge.Profile{
		Name: "codex", Aliases: []string{"codex-acp"}, Title: "Codex",
		EnvNames: []string{"OPENAI_*", "CODEX_*"},
		Binaries: []string{"codex-acp"},
		Modes:    codexModes,
	}
	// Gemini runs Gemini CLI with --acp (--experimental-acp on
	// older builds).
	Gemini = &bridge.Profile{
		Name: "gemini", Aliases: []string{"gemini-cli"}, Title: "Gemini CLI",
		EnvNames: []string{"GEMINI_*", "GOOGLE_*"},
		Binaries: []string{"gemini"}, Args: fixed("--acp"), LegacyArgs: fixed("--experimental-acp"),
		Modes: geminiModes,
	}
	// OpenCode runs "opencode acp". Its build agent counts as acting
	// unasked unless the user's or the project's opencode.json makes it
	// ask before edits and commands (read on the agent's host when a
	// session opens).
	OpenCode = &bridge.Profile{
		Name: "opencode", Title: "OpenCode",
		EnvNames: []string{"OPENCODE_*", "ANTHROPIC_*", "OPENAI_*", "GEMINI_*", "GOOGLE_*", "OPENROUTER_*", "GROQ_*", "MISTRAL_*", "DEEPSEEK_*", "XAI_*"},
		Binaries: []string{"opencode"}, Args: fixed("acp"),
		Modes: openCodeModes,
	}
	// Qwen runs Qwen Code with --acp (--experimental-acp on older
	// builds). Its own mode and model notifications become agent_mode and
	// model events.
	Qwen = &bridge.Profile{
		Name: "qwen", Aliases: []string{"qwen-code"}, Title: "Qwen Code",
		EnvNames: []string{"QWEN_*", "OPENAI_*", "DASHSCOPE_*"},
		Binaries: []string{"qwen"}, Args: fixed("--acp"), LegacyArgs: fixed("--experimental-acp"),
		NewProvider: newQwenProvider,
		Modes:       qwenModes,
	}
	// Copilot runs GitHub Copilot CLI with --acp.
	Copilot = &bridge.Profile{
		Name: "copilot", Aliases: []string{"copilot-cli", "github-copilot"}, Title: "GitHub Copilot CLI",
		EnvNames: []string{"COPILOT_*", "GH_TOKEN", "GITHUB_TOKEN", "GH_HOST"},
		Binaries: []string{"copilot"}, Args: fixed("--acp"),
		Modes: copilotModes,
	}
)

// builtin are the built-in profiles, in the order All lists them.
var builtin = []*bridge.Profile{
	crewcoder.Profile, kiro.Profile, Claude, Codex, Gemini,
	OpenCode, Qwen, Copilot, codey.Profile,
}

// All returns the built-in profiles.
func All() []*bridge.Profile { return slices.Clone(builtin) }

// Lookup returns the built-in profile with the given name or alias
// (case-insensitive).
func Lookup(name string) (*bridge.Profile, bool) {
	name = strings.ToLower(strings.TrimSpace(name))
	for _, p := range builtin {
		if p.Name == name || slices.Contains(p.Aliases, name) {
			return p, true
		}
	}
	return nil, false
}

// fixed returns an Args function for arguments that do not depend on the
// launch options.
func fixed(args ...string) func(bridge.LaunchOptions) ([]string, error) {
	return func(bridge.LaunchOptions) ([]string, error) { return slices.Clone(args), nil }
}
