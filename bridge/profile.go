package bridge

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/acphost/acphost/acpclient"
)

// Profile is what the bridge knows about one kind of agent program: how to
// find it, which arguments start it in ACP mode and carry the app's launch
// choices, what to prepare before each start, and its vendor semantics (a
// Provider). An app picks one by name (LookupProfile) and starts it with
// Host.StartProfile; everything it does arrives as the same Events.
type Profile struct {
	// Name is the profile's canonical name ("crewcoder", "kiro", …).
	Name string
	// Aliases are other names LookupProfile accepts ("kiro-cli").
	Aliases []string
	// Title is a human name for the agent.
	Title string
	// Binaries are the program names to look for, preferred first.
	Binaries []string
	// Args returns the arguments that start the agent in ACP mode with the
	// app's launch options (ExtraArgs are appended by the bridge).
	Args func(o LaunchOptions) []string
	// LegacyArgs, if set, returns the arguments older builds need instead
	// (e.g. --experimental-acp); StartProfile falls back to them when the
	// agent exits before answering initialize.
	LegacyArgs func(o LaunchOptions) []string
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
	// which Relaunch updates.
	NewProvider func(l *Launch) *Provider
	// BeforeSpawn runs before every start of the process, restarts
	// included (for example to write a workspace settings overlay).
	BeforeSpawn func(ctx context.Context, o LaunchOptions) error
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
	// Env is the agent's complete environment (nil: this process's).
	Env []string
	// ExtraArgs are appended to the profile's arguments.
	ExtraArgs []string
	// Resolver finds the binary (nil: a Resolver over Env).
	Resolver *Resolver
	// FS is the agent host's file system, for overlays and the transcript
	// check (nil: the local one, or the SSH host's when SSH is set).
	FS HostFS
	// SSH, when set, starts the agent on that host instead of this machine:
	// the remote shell finds the program (Binary, else the profile's first
	// binary name) in its PATH, Cwd is a directory there, Env holds only
	// what to set for the agent, and FS defaults to the host's files.
	SSH *SSHLaunch
	// Home is the agent host's home directory (default: HOME of Env).
	Home string
	// Clock is the time source of provider timers (default: the real one).
	Clock Clock
	// Legacy starts with the profile's LegacyArgs.
	Legacy bool

	// Approval is CrewCoder's native approval policy: review (default),
	// always, never, full-access or sandboxed; anything else means review.
	Approval string
	// AgentProfile is CrewCoder's agent profile for --mode: general,
	// crewcoder, plugin or extension; empty (or anything else) keeps the
	// user's configured default and omits the flag.
	AgentProfile string

	// Agent is kiro-cli's agent (--agent).
	Agent string
	// Model and Effort are written into kiro-cli's workspace overlay, so
	// they hold after a respawn.
	Model  string
	Effort string
	// ToolSearch configures kiro-cli's MCP tool search (nil: leave the
	// user's setting alone).
	ToolSearch *ToolSearch

	// PermissionMode is Codey's --permission-mode: default, acceptEdits or
	// auto (anything else: default); AlwaysApprove adds --always-approve.
	PermissionMode string
	AlwaysApprove  bool
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

// Options returns the current launch options.
func (l *Launch) Options() LaunchOptions {
	l.mu.Lock()
	defer l.mu.Unlock()
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
	Target SSHTarget
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
	argv := append([]string{name}, p.argv(o)...)
	w := Workspace{Path: o.Cwd, SSH: &o.SSH.Target}
	tr, err := o.SSH.Hosts.Transport(w, argv, o.Env)
	if err != nil {
		return nil, "", Resolution{}, err
	}
	return tr, name, Resolution{Path: name, Name: name, Source: FoundRemote, Searched: []string{"the PATH of " + o.SSH.Target.String()}}, nil
}

// argv returns the profile's arguments for o.
func (p *Profile) argv(o LaunchOptions) []string {
	args := p.Args
	if o.Legacy && p.LegacyArgs != nil {
		args = p.LegacyArgs
	}
	var argv []string
	if args != nil {
		argv = args(o)
	}
	return append(argv, o.ExtraArgs...)
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
	return &acpclient.CommandTransport{Path: res.Path, Args: p.argv(o), Dir: o.Cwd, Env: o.Env}, res, nil
}

// StartProfile resolves and starts the profile's agent with o and returns
// its Bridge. cfg supplies everything else (ID, logger, clock, sign-in
// hook); its Transport is replaced and its Provider, when nil, is the
// profile's. When the agent exits before answering initialize and the
// profile knows older builds' arguments, it is started once more with them.
func (h *Host) StartProfile(ctx context.Context, p *Profile, o LaunchOptions, cfg Config) (*Bridge, error) {
	if o.Clock == nil {
		o.Clock = cfg.Clock
	}
	b, err := h.startProfile(ctx, p, o, cfg)
	var exit *acpclient.ExitError
	if err != nil && p.LegacyArgs != nil && !o.Legacy && errors.As(err, &exit) {
		o.Legacy = true
		if lb, lerr := h.startProfile(ctx, p, o, cfg); lerr == nil {
			return lb, nil
		}
	}
	return b, err
}

func (h *Host) startProfile(ctx context.Context, p *Profile, o LaunchOptions, cfg Config) (*Bridge, error) {
	if o.SSH != nil && o.SSH.Hosts != nil {
		if o.FS == nil {
			o.FS = o.SSH.Hosts.HostFS(o.SSH.Target)
		}
		if o.Home == "" {
			// The SFTP server starts in the login directory.
			if home, err := o.SSH.Hosts.remoteHome(ctx, o.SSH.Target); err == nil {
				o.Home = home
			}
		}
	}
	tr, path, res, err := p.transport(ctx, o)
	if err != nil {
		return nil, err
	}
	l := &Launch{Profile: p, opts: o, res: res}
	cfg.Transport = &profileTransport{launch: l, inner: tr, path: path}
	if cfg.Provider == nil {
		cfg.Provider = &Provider{Name: p.Name}
		if p.NewProvider != nil {
			cfg.Provider = p.NewProvider(l)
		}
	}
	if cfg.Logger != nil {
		cfg.Logger.Info("bridge: starting agent", "profile", p.Name, "binary", res.Path, "found", res.Source)
	}
	b, err := h.Start(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("bridge: %s (%s, found in %s): %w", p.Name, res.Path, res.Source, err)
	}
	return b, nil
}

// Launch returns the profile launch of a bridge started with StartProfile,
// or nil.
func (b *Bridge) Launch() *Launch {
	b.mu.Lock()
	defer b.mu.Unlock()
	if pt, ok := b.cfg.Transport.(*profileTransport); ok {
		return pt.launch
	}
	return nil
}

// Relaunch restarts the agent of a profile bridge with changed launch
// options (a CrewCoder profile or approval policy, a kiro-cli agent) and
// resumes its sessions natively on the new process, under the same session
// ids. It is refused with ErrBusy while any session runs a turn, so
// authority never changes under a running turn. Policies are re-applied, so
// a launch that locks the execution mode takes effect at once.
func (b *Bridge) Relaunch(ctx context.Context, change func(*LaunchOptions)) error {
	l := b.Launch()
	if l == nil {
		return fmt.Errorf("bridge %s: relaunch: not started from a profile", b.cfg.ID)
	}
	b.mu.Lock()
	sessions := make([]*Session, 0, len(b.sessions))
	for _, s := range b.sessions {
		sessions = append(sessions, s)
	}
	b.mu.Unlock()
	var locked []*Session
	unlock := func() {
		for _, s := range locked {
			s.turnMu.Unlock()
		}
		locked = nil
	}
	for _, s := range sessions {
		if !s.turnMu.TryLock() {
			unlock()
			return fmt.Errorf("bridge %s: relaunch: %w", b.cfg.ID, ErrBusy)
		}
		locked = append(locked, s)
	}
	opts := l.Options()
	change(&opts)
	tr, path, res, err := l.Profile.transport(ctx, opts)
	if err != nil {
		unlock()
		return err
	}

	b.startMu.Lock()
	b.mu.Lock()
	old := b.conn
	b.conn = nil
	b.cfg.Transport = &profileTransport{launch: l, inner: tr, path: path}
	b.mu.Unlock()
	l.mu.Lock()
	l.opts, l.res = opts, res
	l.mu.Unlock()
	if old != nil {
		old.Close()
		<-old.Done()
	}
	unlock()
	b.running.Wait() // the old process's exit is reported before the new one starts
	_, err = b.start(ctx)
	b.startMu.Unlock()
	if err != nil {
		return fmt.Errorf("bridge %s: relaunch: %w", b.cfg.ID, err)
	}
	var errs []error
	for _, s := range sessions {
		s.SetPolicy(s.Policy())
		if !s.turnMu.TryLock() {
			continue // a prompt got in first and resumes the session itself
		}
		_, err := s.reattach(ctx)
		s.turnMu.Unlock()
		if err != nil {
			errs = append(errs, fmt.Errorf("session %s: %w", s.id, err))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("bridge %s: relaunch: resuming sessions: %w", b.cfg.ID, errors.Join(errs...))
	}
	return nil
}

// profiles are the built-in profiles, in the order Profiles lists them.
var profiles = []*Profile{
	CrewCoderProfile, KiroProfile, ClaudeProfile, CodexProfile, GeminiProfile,
	OpenCodeProfile, QwenProfile, CopilotProfile, CodeyProfile,
}

// Profiles returns the built-in profiles.
func Profiles() []*Profile { return slices.Clone(profiles) }

// LookupProfile returns the built-in profile with the given name or alias
// (case-insensitive).
func LookupProfile(name string) (*Profile, bool) {
	name = strings.ToLower(strings.TrimSpace(name))
	for _, p := range profiles {
		if p.Name == name || slices.Contains(p.Aliases, name) {
			return p, true
		}
	}
	return nil, false
}

// environ is this process's environment; a variable so tests of the
// resolver do not depend on the machine.
var environ = os.Environ

// fixed returns an Args function for arguments that do not depend on the
// launch options.
func fixed(args ...string) func(LaunchOptions) []string {
	return func(LaunchOptions) []string { return slices.Clone(args) }
}
