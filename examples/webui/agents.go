package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/bridge"
	"github.com/acphost/acphost/bridge/profiles"
	"github.com/acphost/acphost/bridge/terminal"
	"github.com/acphost/acphost/examples/internal/cmdline"
	"github.com/acphost/acphost/examples/internal/demoagent"
)

// agentSpec is one agent the server was started with. The page names it
// by Name (or its index in the list); it can never supply a command.
type agentSpec struct {
	// Name is the agent's bridge id, unique among the agents and stable
	// across runs, so journaled sessions find their agent again.
	Name string
	// Profile is a built-in profile; Argv an --agent command; with
	// neither, the built-in demo agent runs, labelled Name.
	Profile *bridge.Profile
	Argv    []string
	// Env is the agent's complete environment when local (nil: this
	// process's), the variables set for it when on an SSH host. A local
	// agent gets a minimal one (acpclient.MinimalEnv, with a profile's
	// vendor variables), so nothing unrelated of the user's reaches it.
	Env []string
}

// agentSpecs turns --provider and --agent into the agent list: the demo
// agent when neither is given.
func agentSpecs(o *options) ([]agentSpec, error) {
	var specs []agentSpec
	taken := map[string]bool{}
	unique := func(name string) string {
		n := name
		for i := 2; taken[n]; i++ {
			n = fmt.Sprintf("%s-%d", name, i)
		}
		taken[n] = true
		return n
	}
	for _, name := range o.providers {
		p, ok := profiles.Lookup(name)
		if !ok {
			return nil, fmt.Errorf("--provider %q: no such profile", name)
		}
		spec := agentSpec{Name: unique(p.Name), Profile: p, Env: agentEnv(o, p.EnvNames)}
		specs = append(specs, spec)
	}
	for _, line := range o.agents {
		argv, err := cmdline.Split(line)
		if err != nil {
			return nil, fmt.Errorf("--agent %q: %w", line, err)
		}
		if len(argv) == 0 {
			return nil, fmt.Errorf("--agent %q: no command", line)
		}
		spec := agentSpec{Name: unique(filepath.Base(argv[0])), Argv: argv, Env: agentEnv(o, nil)}
		specs = append(specs, spec)
	}
	if len(specs) == 0 {
		specs = append(specs, agentSpec{Name: "demo"})
	}
	return specs, nil
}

// agentEnv is an agent's environment: the minimal one with vendor's
// variables and what --env passes on and sets when local, only what --env
// passes on and sets on an SSH host.
func agentEnv(o *options, vendor []string) []string {
	if o.ssh != "" {
		env := o.env.Remote(os.Environ())
		if len(env) == 0 {
			return nil
		}
		return env
	}
	return o.env.Local(os.Environ(), vendor)
}

// agent is a configured agent and its bridge, once started.
type agent struct {
	spec    agentSpec
	index   int
	inspect *inspector

	// starting serialises starts, which may take long; mu guards the
	// state, which the page reads meanwhile.
	starting sync.Mutex
	mu       sync.Mutex
	bridge   *bridge.Bridge
	err      error  // why the last start failed
	title    string // the agent's own title, from its last initialize
	exit     error  // why its process last ended, when it crashed
	// ended: the exited event of the process that last ran has been read,
	// so exit says how it ended; cleared once it is seen running again.
	ended bool
}

// kind says what runs the agent, for the page.
func (a *agent) kind() string {
	switch {
	case a.spec.Profile != nil:
		return "profile"
	case a.spec.Argv != nil:
		return "command"
	}
	return "demo"
}

// start returns the agent's bridge, starting the agent when it has none
// (the first time, or after a start that failed). A bridge whose process
// died is returned as is: its next call starts the process again.
func (a *agent) start(ctx context.Context, s *server) (*bridge.Bridge, error) {
	a.starting.Lock()
	defer a.starting.Unlock()
	if b, _ := a.state(); b != nil {
		return b, nil
	}
	b, err := s.startBridge(ctx, a)
	a.mu.Lock()
	a.bridge, a.err = b, err
	a.mu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("starting agent %s: %w", a.spec.Name, err)
	}
	return b, nil
}

// state returns the bridge, if started, and the last start failure.
func (a *agent) state() (*bridge.Bridge, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.bridge, a.err
}

// startBridge starts the agent of a in the workspace.
func (s *server) startBridge(ctx context.Context, a *agent) (*bridge.Bridge, error) {
	cfg := bridge.Config{
		ID:                  a.spec.Name,
		ClientInfo:          &acpclient.Implementation{Name: "acphost-webui", Title: "acphost web UI", Version: "0.1.0"},
		Logger:              a.inspect.logger(),
		WireTrace:           true,
		AgentTerminalOutput: s.cfg.Terminals,
		ElicitationModes:    []string{"form", "url"},
	}
	if s.cfg.Terminals {
		cfg.Terminals = &terminal.Options{}
	}
	ws := s.cfg.Workspace
	switch {
	case a.spec.Profile != nil:
		launch := bridge.LaunchOptions{Cwd: ws.cwd, Env: a.spec.Env}
		if ws.hosts != nil {
			launch.SSH = &bridge.SSHLaunch{Hosts: ws.hosts, Target: *ws.ws.SSH}
		}
		return s.host.StartProfile(ctx, a.spec.Profile, launch, cfg)
	case a.spec.Argv != nil && ws.hosts != nil:
		t, err := ws.hosts.Transport(ws.ws, a.spec.Argv, a.spec.Env)
		if err != nil {
			return nil, err
		}
		cfg.Transport = t
	case a.spec.Argv != nil:
		cfg.Transport = &acpclient.CommandTransport{Path: a.spec.Argv[0], Args: a.spec.Argv[1:], Dir: ws.cwd, Env: a.spec.Env}
	case ws.hosts != nil:
		return nil, errors.New("the demo agent runs in this process, not on an SSH host")
	default:
		cfg.Transport = &demoagent.Transport{Name: a.spec.Name, Pace: s.cfg.DemoPace}
		cfg.AgentModes = demoagent.Modes()
	}
	return s.host.Start(ctx, cfg)
}

// agentStatus is what the page shows of an agent.
type agentStatus struct {
	Index int    `json:"index"`
	Name  string `json:"name"`
	Title string `json:"title,omitempty"`
	Kind  string `json:"kind"`
	// State is "running", "stopped" (its process ended; the next prompt
	// starts it again), "crashed" (it ended on its own, by a failure: Exit
	// and Stderr say how; the next prompt or new session starts it
	// again), "not-installed", "sign-in" (it wants a sign-in first) or
	// "failed" (Error says why), or "starting".
	State string `json:"state"`
	Error string `json:"error,omitempty"`
	// Exit is how a crashed agent ended ("exit status 3", "signal:
	// killed"); Stderr the last of what it wrote to its standard error.
	Exit   string `json:"exit,omitempty"`
	Stderr string `json:"stderr,omitempty"`
	// Hint says what to do about a not-installed agent, in a line; Error
	// keeps the whole story (where it was looked for).
	Hint       string                        `json:"hint,omitempty"`
	Initialize *acpclient.InitializeResponse `json:"initialize,omitempty"`
	CanCompact bool                          `json:"canCompact"`
}

func (a *agent) status(ctx context.Context, wait time.Duration) agentStatus {
	b, err := a.state()
	if b != nil && !b.Running() {
		a.awaitExit(ctx, wait)
	}
	a.mu.Lock()
	st := agentStatus{Index: a.index, Name: a.spec.Name, Kind: a.kind(), State: "starting", Title: a.title}
	exit := a.exit
	a.mu.Unlock()
	if a.spec.Profile != nil {
		st.Title = a.spec.Profile.Title
	}
	switch {
	case b != nil && b.Running():
		st.State = "running"
		a.mu.Lock()
		a.ended, a.exit = false, nil
		a.mu.Unlock()
		st.Initialize = b.InitializeResponse()
		if info := st.Initialize.AgentInfo; info != nil && a.spec.Profile == nil && info.Title != "" {
			st.Title = info.Title
			a.mu.Lock()
			a.title = info.Title // shown while the agent is stopped too
			a.mu.Unlock()
		}
		st.CanCompact = a.canCompact(b, st.Initialize)
	case b != nil && exit != nil:
		st.State, st.Exit, st.Stderr = "crashed", exitText(exit), exitStderr(exit)
	case b != nil:
		st.State = "stopped"
	case err != nil:
		st.State, st.Error = failureState(err), err.Error()
		if st.State == "not-installed" {
			st.Hint = a.installHint()
		}
		if we, ok := errors.AsType[*bridge.WithheldEnvError](err); ok {
			st.Hint = withheldHint(we.Names)
		}
	}
	return st
}

// canCompact reports whether the agent's profile compacts natively and
// the running agent offers it (Session.Compact refuses otherwise). The
// profile's hooks are per launch; b's launch is the one running.
func (a *agent) canCompact(b *bridge.Bridge, init *acpclient.InitializeResponse) bool {
	p := a.spec.Profile
	if p == nil || p.NewProvider == nil || b.Launch() == nil {
		return false
	}
	prov := p.NewProvider(b.Launch())
	if prov == nil || prov.Compact == nil {
		return false
	}
	return prov.CompactAvailable == nil || prov.CompactAvailable(init)
}

// failureState names why an agent could not start.
func failureState(err error) string {
	switch {
	case errors.Is(err, acpclient.ErrAgentNotFound):
		return "not-installed"
	case errors.Is(err, bridge.ErrAuthRequired), acpclient.IsAuthRequired(err):
		return "sign-in"
	}
	return "failed"
}

// installHint says what to do about an agent whose program is missing:
// for a profile what acprun doctor says (its program names) and how to
// check it there, for a command to install it or give its full path.
func (a *agent) installHint() string {
	if p := a.spec.Profile; p != nil {
		return fmt.Sprintf("Install %s (%s), then check it with: acprun doctor %s", p.Title, strings.Join(p.Binaries, " or "), p.Name)
	}
	if len(a.spec.Argv) > 0 {
		return fmt.Sprintf("Install %s, or start webui with --agent naming its full path", filepath.Base(a.spec.Argv[0]))
	}
	return ""
}
