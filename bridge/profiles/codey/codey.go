package codey

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/bridge"
)

// Profile runs "codey agent [--permission-mode X] [--always-approve]
// stdio" with Options. Codey lists its models in initialize's
// _meta.modelState as well as in session/new, and "codey models" prints the
// sign-in state and the models for health checks (ParseModels).
// Its mode table reports --always-approve and the acceptEdits and auto
// permission modes as launch escalations.
var Profile = &bridge.Profile{
	Name: "codey", Title: "Codey",
	EnvNames: []string{"CODEY_*", "ANTHROPIC_*"},
	Binaries: []string{"codey"}, Args: args,
	StatusArgs: []string{"models"}, ParseStatus: ParseModels,
	NewProvider: func(*bridge.Launch) *bridge.Provider {
		return &bridge.Provider{Name: "codey", ModelsFromInitialize: models}
	},
	Modes: modes,
}

// Options are Codey's own launch options, given as
// bridge.LaunchOptions.Vendor (a value or a pointer; nil means the
// defaults).
type Options struct {
	// PermissionMode is Codey's --permission-mode: one of PermissionModes
	// (anything else means "default").
	PermissionMode string
	// AlwaysApprove adds --always-approve.
	AlwaysApprove bool
}

// PermissionModes are the values Codey's --permission-mode takes.
var PermissionModes = []string{"default", "acceptEdits", "auto"}

func args(lo bridge.LaunchOptions) ([]string, error) {
	o, err := bridge.VendorOptions[Options](lo)
	if err != nil {
		return nil, err
	}
	args := []string{"agent"}
	if mode := permissionMode(o); mode != "default" {
		args = append(args, "--permission-mode", mode)
	}
	if o.AlwaysApprove {
		args = append(args, "--always-approve")
	}
	return append(args, "stdio"), nil
}

// permissionMode returns the --permission-mode to pass: one of
// PermissionModes, anything else being "default".
func permissionMode(o Options) string {
	if slices.Contains(PermissionModes, o.PermissionMode) {
		return o.PermissionMode
	}
	return "default"
}

// models reads initialize._meta.modelState.
func models(agent *acpclient.InitializeResponse) *acpclient.ModelState {
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
	// loggedIn is the sign-in line of "codey models", read the way
	// T3 Code reads it (/you are logged in/i); what follows "as" is the
	// account or endpoint.
	loggedIn = regexp.MustCompile(`(?i)you are logged in(?:\s+as\s+(.*?))?\s*\.?\s*$`)
	// modelLine is a model bullet: "* id (default)" or "- id".
	modelLine = regexp.MustCompile(`^\s*[*-]\s+(\S+)`)
)

// ParseModels reads the output of "codey models": a "You are logged in
// as ACCOUNT." line (its absence means signed out) and one bullet line per
// model, "(default)" marking the default. Other lines are ignored.
func ParseModels(output []byte) bridge.AgentStatus {
	st := bridge.AgentStatus{SignIn: bridge.SignInSignedOut}
	models := &acpclient.ModelState{}
	for _, line := range strings.Split(string(output), "\n") {
		if m := loggedIn.FindStringSubmatch(line); m != nil {
			st.SignIn, st.Account = bridge.SignInSignedIn, strings.TrimSpace(m[1])
			continue
		}
		m := modelLine.FindStringSubmatch(line)
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
