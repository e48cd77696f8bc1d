package kiro

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/bridge"
)

// kiro-cli's agents are its ACP modes (kiro_default and the agents of the
// user's specs). Whether one asks before it acts is in its spec: the tools
// it trusts (allowedTools) and the paths, commands and services its tool
// settings pre-approve. This file reads the specs where kiro-cli reads
// them, on the agent's host, and classifies each agent.

// defaultAgent is kiro-cli's built-in agent, used without --agent. It
// trusts only its read tool, so it asks before everything else.
const defaultAgent = "kiro_default"

// agentSpecPath is where kiro-cli keeps the spec of agent name under dir,
// a workspace (project scope) or the home directory (user scope).
func agentSpecPath(dir, name string) string {
	return path.Join(dir, ".kiro", "agents", name+".json")
}

// agentSpec is what of a kiro-cli agent spec decides whether it asks.
type agentSpec struct {
	AllowedTools  []string                   `json:"allowedTools"`
	ToolsSettings map[string]json.RawMessage `json:"toolsSettings"`
}

// toolSettings are the pre-approvals a tool's settings may hold.
type toolSettings struct {
	AllowedPaths    []string `json:"allowedPaths"`
	AllowedCommands []string `json:"allowedCommands"`
	AllowedServices []string `json:"allowedServices"`
}

// acts reports whether the spec lets the agent change something unasked,
// and names what does.
func (s agentSpec) acts() (bool, string) {
	for _, tool := range s.AllowedTools {
		if !slices.Contains(readOnlyTools, strings.TrimSpace(tool)) {
			return true, "trusts " + tool
		}
	}
	for tool, raw := range s.ToolsSettings {
		var ts toolSettings
		if json.Unmarshal(raw, &ts) != nil || slices.Contains(readOnlyTools, tool) {
			continue
		}
		if len(ts.AllowedPaths)+len(ts.AllowedCommands)+len(ts.AllowedServices) > 0 {
			return true, "pre-approves " + tool
		}
	}
	return false, ""
}

// learn reads the spec of each agent kiro-cli offers, the workspace's
// before the user's (kiro-cli prefers it), and makes the table: an agent
// whose spec trusts only reading asks (Safe), one that trusts more acts
// unasked (Auto), one without a readable spec is left out (unknown).
// kiro_default without a spec asks.
func learn(ctx context.Context, fsys bridge.HostFS, home, cwd string, modes []acpclient.Mode) (*bridge.ModeTable, error) {
	t := &bridge.ModeTable{LaunchEscalation: launchEscalation, Source: "kiro-cli agent specs (.kiro/agents/*.json in the workspace and home)"}
	for _, m := range modes {
		id := m.ID
		if id == "" || strings.ContainsAny(id, `/\`) || strings.Contains(id, "..") {
			continue
		}
		spec, found, err := readSpec(ctx, fsys, id, cwd, home)
		switch {
		case err != nil:
			return nil, err
		case !found && id == defaultAgent:
			t.Safe = append(t.Safe, id)
		case !found || spec == nil:
			// no spec, or one kiro-cli could not read either: unknown
		default:
			if auto, _ := spec.acts(); auto {
				t.Auto = append(t.Auto, id)
			} else {
				t.Safe = append(t.Safe, id)
			}
		}
	}
	return t, nil
}

// readSpec reads agent id's spec from the first of dirs that has one;
// found without a spec means it does not parse. A file that is missing is
// no error; one that cannot be read is.
func readSpec(ctx context.Context, fsys bridge.HostFS, id string, dirs ...string) (*agentSpec, bool, error) {
	for _, dir := range dirs {
		if dir == "" {
			continue
		}
		data, err := fsys.ReadFile(ctx, agentSpecPath(dir, id))
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, false, err
		}
		var spec agentSpec
		if json.Unmarshal(data, &spec) != nil {
			return nil, true, nil
		}
		return &spec, true, nil
	}
	return nil, false, nil
}
