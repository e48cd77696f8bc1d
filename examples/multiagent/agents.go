package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/bridge"
	"github.com/acphost/acphost/bridge/profiles"
	"github.com/acphost/acphost/examples/internal/cmdline"
	"github.com/acphost/acphost/examples/internal/demoagent"
	"github.com/acphost/acphost/fsroot"
)

// names label the demo agents.
var names = []string{"alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"}

// agentSpec is one agent to start: a profile, or a transport (a command,
// a demo agent), in dir. label is the demo agent's name; the others are
// labelled once they answer initialize.
type agentSpec struct {
	id, dir, label string
	profile        *bridge.Profile
	transport      acpclient.Transport
}

// agentPlan is the agents to start and what to remove once they are done.
type agentPlan struct {
	agents  []agentSpec
	cleanup func()
}

// planAgents turns the flags into the agents to start: the -agent commands
// and -provider profiles in cwd, or n demo agents in subdirectories of cwd
// or of a temporary directory that cleanup removes.
func planAgents(commands, providers []string, n int, cwd string, pace time.Duration) (agentPlan, error) {
	plan := agentPlan{cleanup: func() {}}
	if len(commands) == 0 && len(providers) == 0 {
		return demoPlan(n, cwd, pace)
	}
	dir, err := filepath.Abs(cmpOr(cwd, "."))
	if err != nil {
		return plan, err
	}
	for _, name := range providers {
		p, ok := profiles.Lookup(name)
		if !ok {
			return plan, fmt.Errorf("-provider %q: unknown", name)
		}
		plan.agents = append(plan.agents, agentSpec{id: fmt.Sprintf("agent-%d", len(plan.agents)+1), dir: dir, profile: p})
	}
	for _, a := range commands {
		argv, err := cmdline.Split(a)
		if err != nil {
			return plan, fmt.Errorf("-agent %q: %w", a, err)
		}
		plan.agents = append(plan.agents, agentSpec{id: fmt.Sprintf("agent-%d", len(plan.agents)+1), dir: dir,
			transport: &acpclient.CommandTransport{Path: argv[0], Args: argv[1:], Dir: dir}})
	}
	return plan, nil
}

// demoPlan is n demo agents, pausing pace between streamed pieces, each
// in its own subdirectory of workspace, a new temporary directory when
// workspace is "", which cleanup removes.
func demoPlan(n int, workspace string, pace time.Duration) (agentPlan, error) {
	plan := agentPlan{cleanup: func() {}}
	if n < 1 || n > len(names) {
		return plan, fmt.Errorf("-n %d: want 1 to %d", n, len(names))
	}
	if workspace == "" {
		tmp, err := os.MkdirTemp("", "multiagent-")
		if err != nil {
			return plan, err
		}
		workspace, plan.cleanup = tmp, func() { os.RemoveAll(tmp) }
	}
	for _, name := range names[:n] {
		dir, err := filepath.Abs(filepath.Join(workspace, name))
		if err == nil {
			err = os.MkdirAll(dir, 0o755)
		}
		if err != nil {
			plan.cleanup()
			return plan, err
		}
		plan.agents = append(plan.agents, agentSpec{id: name, dir: dir, label: name, transport: &demoagent.Transport{Name: name, Pace: pace}})
	}
	return plan, nil
}

// start starts the agents, names each for out and opens one session on
// each. The returned function releases their file roots.
func start(ctx context.Context, host *bridge.Host, agents []agentSpec, out *labelled) ([]*bridge.Session, func(), error) {
	var roots []*fsroot.Local
	closeAll := func() {
		for _, r := range roots {
			r.Close()
		}
	}
	var sessions []*bridge.Session
	for _, a := range agents {
		root, err := fsroot.NewLocal(a.dir, nil)
		if err != nil {
			return nil, closeAll, err
		}
		roots = append(roots, root)
		b, err := startAgent(ctx, host, a)
		if err != nil {
			return nil, closeAll, fmt.Errorf("starting %s: %w", cmpOr(a.label, a.id), err)
		}
		out.name(a.id, agentLabel(a, b))
		s, err := b.OpenSession(ctx, bridge.SessionConfig{Cwd: root.Cwd(), Files: root, Policy: bridge.Policy{Mode: bridge.ModeBuild}})
		if err != nil {
			return nil, closeAll, fmt.Errorf("opening a session on %s: %w", out.label(a.id), err)
		}
		sessions = append(sessions, s)
	}
	return sessions, closeAll, nil
}

// startAgent starts one agent: a profile's with a minimal environment (its
// vendor's variables and the base set, not the whole of this process's).
func startAgent(ctx context.Context, host *bridge.Host, a agentSpec) (*bridge.Bridge, error) {
	if a.profile != nil {
		launch := bridge.LaunchOptions{Cwd: a.dir, Env: a.profile.MinimalEnv(os.Environ())}
		return host.StartProfile(ctx, a.profile, launch, bridge.Config{ID: a.id})
	}
	return host.Start(ctx, bridge.Config{ID: a.id, Transport: a.transport})
}

// agentLabel names a started agent for a person: the demo agent's name,
// the profile's title, or the agent's own title or name from its
// initialize answer, else the program's name.
func agentLabel(a agentSpec, b *bridge.Bridge) string {
	switch {
	case a.label != "":
		return a.label
	case a.profile != nil && a.profile.Title != "":
		return a.profile.Title
	}
	if init := b.InitializeResponse(); init != nil && init.AgentInfo != nil {
		if label := cmpOr(strings.TrimSpace(init.AgentInfo.Title), strings.TrimSpace(init.AgentInfo.Name)); label != "" {
			return label
		}
	}
	if ct, ok := a.transport.(*acpclient.CommandTransport); ok {
		return filepath.Base(ct.Path)
	}
	return a.id
}

func cmpOr(s, fallback string) string {
	if s == "" {
		return fallback
	}
	return s
}
