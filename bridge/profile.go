package bridge

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/sshconn"
)

// Profile is what the bridge knows about one kind of agent program: how to
// find it, which arguments start it in ACP mode and carry the app's launch
// choices, what to prepare before each start, and its vendor semantics (a
// Provider). The built-in profiles and their registry live in package
// bridge/profiles and its subpackages; an app picks one there and starts it
// with Host.StartProfile; everything it does arrives as the same Events.
// Anyone can write one: it needs only this package's exported API.
type Profile struct {
	// Name is the profile's canonical name, in lower case.
	Name string
	// Aliases are other names a registry accepts for it.
	Aliases []string
	// Title is a human name for the agent.
	Title string
	// Binaries are the program names to look for, preferred first.
	Binaries []string
	// EnvNames are the variables of the user's environment the agent reads
	// for its vendor (API keys, base URLs, configuration directories):
	// names, or prefixes ending in "*" ("ANTHROPIC_*"). An app that starts
	// the agent with a minimal environment passes these on (MinimalEnv);
	// the bridge itself starts it with LaunchOptions.Env as given.
	EnvNames []string
	// Args returns the arguments that start the agent in ACP mode with the
	// app's launch options (ExtraArgs are appended by the bridge), or an
	// error when the options cannot be honoured (for example a Vendor value
	// of another profile's type, see VendorOptions); nil means none.
	Args func(o LaunchOptions) ([]string, error)
	// LegacyArgs, if set, returns the arguments older builds need instead
	// (e.g. --experimental-acp); StartProfile falls back to them when the
	// agent exits before answering initialize.
	LegacyArgs func(o LaunchOptions) ([]string, error)
	// AgentModeAtLaunch reports whether the agent takes mode as its own
	// mode when it starts (LaunchOptions.AgentMode: an agent, a persona, a
	// behaviour profile chosen by a flag), rather than through ACP's
	// session/set_mode; nil means it takes none. See TakesAgentMode.
	AgentModeAtLaunch func(mode string) bool
	// VersionArgs print the version (default --version); Doctor runs them.
	VersionArgs []string
	// StatusArgs, if set, make the program print what it can tell without
	// a session (its models, whether the user is signed in); Doctor runs
	// them directly, no shell, and ParseStatus reads their standard
	// output. A non-zero exit discards the output.
	StatusArgs  []string
	ParseStatus func(output []byte) AgentStatus
	// NewProvider returns the vendor hooks of one launch; nil means plain
	// ACP. Hooks that depend on launch options read them from the Launch,
	// which Relaunch updates; its options always have a Clock.
	NewProvider func(l *Launch) *Provider
	// BeforeSpawn runs before every start of the process, restarts
	// included (for example to write a workspace settings overlay).
	BeforeSpawn func(ctx context.Context, o LaunchOptions) error
	// Modes is the table of the agent's own modes and config options by
	// what they let it do unasked; nil means they are unknown, and its
	// sessions report AuthorityUnknown.
	Modes *ModeTable
}

// LaunchOptions are the app's choices for starting an agent. The zero value
// starts it the default way, with the binary found by the default Resolver.
type LaunchOptions struct {
	// Binary is an explicit path to the agent program; it wins over every
	// other place (see Resolver).
	Binary string
	// Cwd is the workspace: the process's working directory and the root of
	// workspace settings overlays.
	Cwd string
	// Env is the agent's complete environment (nil: this process's;
	// Profile.MinimalEnv builds a smaller one with the vendor's variables).
	Env []string
	// ExtraArgs are appended to the profile's arguments.
	ExtraArgs []string
	// Resolver finds the binary (nil: a Resolver over Env).
	Resolver *Resolver
	// FS is the agent host's file system, for overlays and the transcript
	// check (nil: the local one, or the SSH host's when SSH is set). Hooks
	// read it through HostFS.
	FS HostFS
	// SSH, when set, starts the agent on that host instead of this machine:
	// the remote shell finds the program (Binary, else the profile's first
	// binary name) in its PATH, Cwd is a directory there, Env holds only
	// what to set for the agent, and FS defaults to the host's files.
	SSH *SSHLaunch
	// Home is the agent host's home directory (default: HOME of Env; hooks
	// read it through HostHome).
	Home string
	// Clock is the time source of provider timers (default: Config.Clock,
	// else the real one).
	Clock Clock
	// Legacy starts with the profile's LegacyArgs.
	Legacy bool

	// AgentMode is the agent's own mode to start in, for profiles that take
	// one at launch (Profile.AgentModeAtLaunch); "" keeps the agent's
	// default. It is unrelated to the host's policy Mode.
	AgentMode string
	// Model and Effort are the model and reasoning effort chosen at launch,
	// for profiles that apply them before the agent starts (for example in
	// a settings file written before every start, so they hold after a
	// respawn); sessions still choose theirs with SessionConfig.
	Model  string
	Effort string
	// Vendor holds the options only one profile understands, as a value of
	// the type that profile's package defines; nil means its defaults. The
	// profile reads it with VendorOptions and refuses another type.
	Vendor any
}

// Launch is the live launch of a profile by a Bridge: its options, which
// Relaunch changes, and where its binary was found.
type Launch struct {
	// Profile is the profile launched.
	Profile *Profile

	mu   sync.Mutex
	opts LaunchOptions
	res  Resolution
}

// set records the options and resolution of a new launch of l.
func (l *Launch) set(o LaunchOptions, res Resolution) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.opts, l.res = o, res
}

// NewLaunch returns a launch of p with o that no agent runs yet, for
// building p's Provider without starting it (Doctor reads what the hooks
// tell from an initialize answer; a profile's tests drive its hooks). A
// nil o.Clock is the real clock.
func NewLaunch(p *Profile, o LaunchOptions) *Launch {
	if o.Clock == nil {
		o.Clock = realClock{}
	}
	return &Launch{Profile: p, opts: o}
}

// Options returns the current launch options.
func (l *Launch) Options() LaunchOptions {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.opts
}

// Update changes the options the next start of the agent uses, without
// restarting it, and returns the new options. It is for provider hooks that
// apply a change live and must keep it across a respawn (an effort pushed
// with a vendor command and also written to a settings file); use
// Bridge.Relaunch to restart with new options.
func (l *Launch) Update(change func(*LaunchOptions)) LaunchOptions {
	l.mu.Lock()
	defer l.mu.Unlock()
	change(&l.opts)
	return l.opts
}

// Resolution returns where the binary was found.
func (l *Launch) Resolution() Resolution {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.res
}

// SSHLaunch says where to start a profile's agent remotely: Target, over
// the shared connection of Hosts.
type SSHLaunch struct {
	Hosts  *SSHHosts
	Target sshconn.Destination
}

// FoundRemote is the Resolution source of a program left to the remote
// host's shell to find.
const FoundRemote = "remote"

// profileTransport starts a profile's process: BeforeSpawn, then the
// command. The bridge reconnects it to restart the agent.
type profileTransport struct {
	launch *Launch
	inner  acpclient.Transport
	path   string
}

func (t *profileTransport) Connect(ctx context.Context) (io.ReadWriteCloser, error) {
	p := t.launch.Profile
	if p.BeforeSpawn != nil {
		if err := p.BeforeSpawn(ctx, t.launch.Options()); err != nil {
			return nil, fmt.Errorf("bridge: %s: preparing the launch of %s: %w", p.Name, t.path, err)
		}
	}
	return t.inner.Connect(ctx)
}

// WithEnv is the inner transport's acpclient.EnvTransport, kept in this
// wrapper.
func (t *profileTransport) WithEnv(vars map[string]string) (acpclient.Transport, error) {
	et, ok := t.inner.(acpclient.EnvTransport)
	if !ok {
		return nil, fmt.Errorf("the agent's transport (%T) cannot be restarted with new environment variables", t.inner)
	}
	inner, err := et.WithEnv(vars)
	if err != nil {
		return nil, err
	}
	cp := *t
	cp.inner = inner
	return &cp, nil
}

// Program is the inner transport's, when it says which program it starts
// (acpclient.ProgramTransport); "" otherwise.
func (t *profileTransport) Program() (path string, args, env []string) {
	if pt, ok := t.inner.(acpclient.ProgramTransport); ok {
		return pt.Program()
	}
	return "", nil, nil
}

// WithDefaultLogger hands l to the inner transport (acpclient.LogTransport).
func (t *profileTransport) WithDefaultLogger(l *slog.Logger) acpclient.Transport {
	lt, ok := t.inner.(acpclient.LogTransport)
	if !ok {
		return t
	}
	cp := *t
	cp.inner = lt.WithDefaultLogger(l)
	return &cp
}

// transport returns what starts the profile's agent with o: a local
// command, or a remote one when o.SSH is set.
func (p *Profile) transport(ctx context.Context, o LaunchOptions) (acpclient.Transport, string, Resolution, error) {
	if o.SSH == nil {
		cmd, res, err := p.Command(ctx, o)
		if err != nil {
			return nil, "", res, err
		}
		return cmd, cmd.Path, res, nil
	}
	if o.SSH.Hosts == nil {
		return nil, "", Resolution{}, fmt.Errorf("bridge: %s: SSH launch without SSHHosts", p.Name)
	}
	name := o.Binary
	if name == "" && len(p.Binaries) > 0 {
		name = p.Binaries[0]
	}
	if name == "" {
		return nil, "", Resolution{}, fmt.Errorf("bridge: %s: no program name", p.Name)
	}
	args, err := p.argv(o)
	if err != nil {
		return nil, "", Resolution{}, err
	}
	argv := append([]string{name}, args...)
	w := Workspace{Path: o.Cwd, SSH: &o.SSH.Target}
	tr, err := o.SSH.Hosts.Transport(w, argv, o.Env)
	if err != nil {
		return nil, "", Resolution{}, err
	}
	return tr, name, Resolution{Path: name, Name: name, Source: FoundRemote, Searched: []string{"the PATH of " + o.SSH.Target.String()}}, nil
}

// argv returns the profile's arguments for o.
func (p *Profile) argv(o LaunchOptions) ([]string, error) {
	args := p.Args
	if o.Legacy && p.LegacyArgs != nil {
		args = p.LegacyArgs
	}
	var argv []string
	if args != nil {
		var err error
		if argv, err = args(o); err != nil {
			return nil, fmt.Errorf("bridge: %s: %w", p.Name, err) // ErrVendorOptions says "launch options"
		}
	}
	return append(argv, o.ExtraArgs...), nil
}

// TakesAgentMode reports whether the profile's agent takes mode as its own
// mode at launch (LaunchOptions.AgentMode); an app sets the others with
// Session.SetAgentMode once a session is open.
func (p *Profile) TakesAgentMode(mode string) bool {
	return mode != "" && p.AgentModeAtLaunch != nil && p.AgentModeAtLaunch(mode)
}

// Command resolves the profile's binary and returns the command that starts
// it in ACP mode with o, and where the binary was found. No shell is
// involved: the program is executed directly.
func (p *Profile) Command(ctx context.Context, o LaunchOptions) (*acpclient.CommandTransport, Resolution, error) {
	r := o.Resolver
	if r == nil {
		r = &Resolver{Env: o.Env}
	}
	res, err := r.Resolve(ctx, o.Binary, p.Binaries...)
	if err != nil {
		return nil, res, fmt.Errorf("bridge: %s: %w", p.Name, err)
	}
	args, err := p.argv(o)
	if err != nil {
		return nil, res, err
	}
	return &acpclient.CommandTransport{Path: res.Path, Args: args, Dir: o.Cwd, Env: o.Env}, res, nil
}

// AgentStatus is what a profile's status command (Profile.StatusArgs)
// tells about the agent without a session.
type AgentStatus struct {
	// Models are the models it lists (nil when none).
	Models *acpclient.ModelState
	// SignIn is SignInSignedIn, SignInSignedOut, or "" when it does not say.
	SignIn string
	// Account is who is signed in, when it says.
	Account string
}
