package bridge

import (
	"encoding/json"
	"regexp"
	"strings"

	"github.com/acphost/acphost/acpclient"
)

// The common ACP agents. They speak plain ACP; their differences are the
// program name and the flags that start ACP mode. Model selection goes
// through a model config option when the agent offers one and the legacy
// session/set_model otherwise (Session.SetModel), for all of them.
var (
	// ClaudeProfile runs Zed's claude-agent-acp adapter for Claude Code.
	ClaudeProfile = &Profile{
		Name: "claude", Aliases: []string{"claude-agent-acp", "claude-code-acp", "claude-code"}, Title: "Claude Code",
		Binaries: []string{"claude-agent-acp", "claude-code-acp"},
	}
	// CodexProfile runs Zed's codex-acp adapter for OpenAI Codex.
	CodexProfile = &Profile{
		Name: "codex", Aliases: []string{"codex-acp"}, Title: "Codex",
		Binaries: []string{"codex-acp"},
	}
	// GeminiProfile runs Gemini CLI with --acp (--experimental-acp on
	// older builds).
	GeminiProfile = &Profile{
		Name: "gemini", Aliases: []string{"gemini-cli"}, Title: "Gemini CLI",
		Binaries: []string{"gemini"}, Args: fixed("--acp"), LegacyArgs: fixed("--experimental-acp"),
	}
	// OpenCodeProfile runs "opencode acp".
	OpenCodeProfile = &Profile{
		Name: "opencode", Title: "OpenCode",
		Binaries: []string{"opencode"}, Args: fixed("acp"),
	}
	// QwenProfile runs Qwen Code with --acp (--experimental-acp on older
	// builds).
	QwenProfile = &Profile{
		Name: "qwen", Aliases: []string{"qwen-code"}, Title: "Qwen Code",
		Binaries: []string{"qwen"}, Args: fixed("--acp"), LegacyArgs: fixed("--experimental-acp"),
	}
	// CopilotProfile runs GitHub Copilot CLI with --acp.
	CopilotProfile = &Profile{
		Name: "copilot", Aliases: []string{"copilot-cli", "github-copilot"}, Title: "GitHub Copilot CLI",
		Binaries: []string{"copilot"}, Args: fixed("--acp"),
	}
	// CodeyProfile runs "codey agent [--permission-mode X]
	// [--always-approve] stdio". Codey lists its models in initialize's
	// _meta.modelState as well as in session/new, and "codey models"
	// prints the sign-in state and the models for health checks.
	CodeyProfile = &Profile{
		Name: "codey", Title: "Codey",
		Binaries: []string{"codey"}, Args: codeyArgs,
		StatusArgs: []string{"models"}, ParseStatus: ParseCodeyModels,
		NewProvider: func(*Launch) *Provider {
			return &Provider{Name: "codey", ModelsFromInitialize: codeyModels}
		},
	}
)

// codeyPermissionModes are the values Codey's --permission-mode takes.
var codeyPermissionModes = []string{"default", "acceptEdits", "auto"}

func codeyArgs(o LaunchOptions) []string {
	args := []string{"agent"}
	mode := "default"
	for _, m := range codeyPermissionModes {
		if o.PermissionMode == m {
			mode = m
		}
	}
	if mode != "default" {
		args = append(args, "--permission-mode", mode)
	}
	if o.AlwaysApprove {
		args = append(args, "--always-approve")
	}
	return append(args, "stdio")
}

// codeyModels reads initialize._meta.modelState.
func codeyModels(agent *acpclient.InitializeResponse) *acpclient.ModelState {
	if agent == nil || len(agent.Meta) == 0 {
		return nil
	}
	var meta struct {
		ModelState *acpclient.ModelState `json:"modelState"`
	}
	if json.Unmarshal(agent.Meta, &meta) != nil {
		return nil
	}
	return meta.ModelState
}

var (
	// codeyLoggedIn is the sign-in line of "codey models", read the way
	// T3 Code reads it (/you are logged in/i); what follows "as" is the
	// account or endpoint.
	codeyLoggedIn = regexp.MustCompile(`(?i)you are logged in(?:\s+as\s+(.*?))?\s*\.?\s*$`)
	// codeyModelLine is a model bullet: "* id (default)" or "- id".
	codeyModelLine = regexp.MustCompile(`^\s*[*-]\s+(\S+)`)
)

// ParseCodeyModels reads the output of "codey models": a "You are logged in
// as ACCOUNT." line (its absence means signed out) and one bullet line per
// model, "(default)" marking the default. Other lines are ignored.
func ParseCodeyModels(output []byte) AgentStatus {
	st := AgentStatus{SignIn: SignInSignedOut}
	models := &acpclient.ModelState{}
	for _, line := range strings.Split(string(output), "\n") {
		if m := codeyLoggedIn.FindStringSubmatch(line); m != nil {
			st.SignIn, st.Account = SignInSignedIn, strings.TrimSpace(m[1])
			continue
		}
		m := codeyModelLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		models.AvailableModels = append(models.AvailableModels, acpclient.ModelInfo{ModelID: m[1], Name: m[1]})
		if models.CurrentModelID == "" && strings.Contains(line, "(default)") {
			models.CurrentModelID = m[1]
		}
	}
	if len(models.AvailableModels) > 0 {
		st.Models = models
	}
	return st
}
