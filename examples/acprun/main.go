// Command acprun runs one turn of a coding agent that speaks the Agent
// Client Protocol (ACP) and shows it in the terminal, or as JSON lines for
// another program. It is the front door of acphost: everything it does goes
// through the public API of the bridge, acpclient and fsroot packages, so
// its source is also a guide to embedding them.
//
//	go run ./examples/acprun "Leave a note in acprun-demo.txt"
//
// With no agent flag it runs a built-in demo agent in-process, which does
// the same scripted turn whatever the prompt: it thinks, streams text,
// announces a tool call, asks permission, writes acprun-demo.txt in the
// workspace through fs/write_text_file, reads it back and ends the turn. Pick a real agent with --provider NAME (a built-in
// profile: crewcoder, kiro, claude, codex, gemini, opencode, qwen, copilot,
// codey) or --agent 'COMMAND ARGS…' (any ACP agent; split like a shell
// would, but no shell runs). "acprun doctor [NAME…]" (or --provider NAME, repeated) checks the profiles'
// agents, a line on stderr as each check ends, and prints a table that
// fits 100 columns, or with --json a JSON array for programs ("acprun
// doctor -h" documents its fields and its exit status: 3 when a provider
// named is not installed, 1 when one is not ready, 7 when one is too slow
// to answer: slow is not broken).
//
// --ssh user@host[:port] starts the agent on that host, in the absolute
// remote directory --cwd, and serves its files over SFTP on the same
// connection (keys from ssh-agent, --ssh-key or unencrypted ~/.ssh/id_*;
// the host is verified against --ssh-known-hosts or ~/.ssh/known_hosts).
// Every profile and --agent work remotely: the remote shell finds the
// program, and workspace overlays and resume checks go over SFTP. --model and --effort select them after it opens,
// --agent-mode picks the agent's own mode (CrewCoder's profile and kiro's
// agent are launch options), --auth answers a sign-in request with that
// method, --timeout bounds the agent's silence, -v logs the library's
// diagnostics.
//
// # The agent's environment
//
// A local agent does not get acprun's whole environment, which holds every
// token the user exported and variables that change how agents behave (a
// CLAUDECODE=1 left by a shell makes claude-agent-acp refuse to start). It
// gets a minimal one (acpclient.MinimalEnv): PATH, HOME, USER, LOGNAME,
// SHELL, TERM, TMPDIR, TZ, NPM_CONFIG_PREFIX, LANG, LANGUAGE, LC_*, XDG_*,
// the proxy variables (HTTP_PROXY, HTTPS_PROXY, NO_PROXY, ALL_PROXY, also
// lower case), extra TLS roots (SSL_CERT_FILE, SSL_CERT_DIR,
// NODE_EXTRA_CA_CERTS) and the desktop session's DISPLAY, WAYLAND_DISPLAY
// and DBUS_SESSION_BUS_ADDRESS (browser sign-ins, keyrings); with --provider
// also the vendor variables the profile declares (bridge.Profile.EnvNames:
// claude ANTHROPIC_* and CLAUDE_CONFIG_DIR, codex OPENAI_* and CODEX_*,
// gemini GEMINI_* and GOOGLE_*, copilot GH_TOKEN and GITHUB_TOKEN, …).
// --env NAME passes one more (--env 'AWS_*' every variable of a prefix),
// --env NAME=VALUE sets one, and --env-all passes everything, as before.
// An agent on an SSH host has the SSH server's environment, plus what
// --env passes or sets. Commands run through --terminals get their own,
// smaller base (terminal.Local).
//
// # Sessions and the journal
//
// Every run keeps its session and all its events in a journal, an SQLite
// file (package journal): $XDG_DATA_HOME/acphost/journal.db, by default
// ~/.local/share/acphost/journal.db, or the file --journal names. Each
// session has a host key that never changes, printed after every turn: in
// the resume hint ("continue it with --resume KEY") when the agent can load
// or resume sessions (loadSession, sessionCapabilities.resume), else with
// the history command that shows it. "acprun fork SESSION [--turn N]" forks
// a session through an agent that advertises session/fork and prints the
// fork's key, whose history shows the session's up to the fork, then its
// own; with --transcript, where the agent cannot fork (at turn N), the
// fork is a new session whose first prompt carries a marked transcript of
// the earlier turns. "acprun sessions" lists the journaled sessions, most
// recent first, with their keys whole; "acprun history SESSION" prints one
// (--events: as JSON lines); "acprun chat" holds a conversation, every
// line of stdin a prompt, queued while a turn runs, with /steer, /queue,
// /cancel, /clear and /resume ("acprun chat -h"); --resume SESSION
// continues one, loading the
// agent's own session where it can, in the directory it was recorded in
// (a different --cwd is refused unless --move-cwd moves it) and in the
// agent mode, model, effort and options it was left in. SESSION is the
// key, or an id the agent gave the session (refused, with the matching
// keys, when several sessions had it); an id the journal does not know
// is passed to the agent as its own session id. One program writes a
// journal at a time: beside a running web UI or acprun, a turn is refused
// naming the holder, and --journal FILE gives it another. Flags may follow
// the subcommand.
//
// # Checkpoints
//
// Every turn records the workspace with git before and after it (package
// checkpoint: a git directory of its own under $XDG_CACHE_HOME/acphost,
// on the SSH host for --ssh; the workspace's own repository, if any, is
// never touched), and the turn's end adds a changes event. "acprun
// changes SESSION" prints what each turn changed, a line per file with its
// status letter (A, M, D, R) and path, --turn N one turn's, --diff with
// the unified diff, --events as JSON lines. "acprun restore SESSION --turn
// N" brings the workspace back to its state before turn N and journals
// it; a file changed since the last turn is a conflict that changes
// nothing, unless --force. --checkpoints=false turns the recording off.
//
// The agent may read and write files only inside --cwd (the current
// directory by default). --mode sets the host's policy: ask and plan refuse
// every permission request and file write, build (the default) lets acprun
// answer each request as --approve says, full allows them. --approve ask
// asks on the terminal; without a terminal on stdin the default is reject.
// An agent that acts without asking and cannot be moved to a mode that
// asks (OpenCode without a permission setting that asks, a kiro-cli agent
// whose spec trusts its tools, an escalating flag) is not reviewed by
// build: acprun asks once whether to let it act on its own, on the
// terminal, and without one refuses unless --allow-autonomous answers yes.
// The session's authority (protected, agent-autonomous, unknown) is shown
// on stderr.
//
// # Output
//
// By default: the reply as it streams, reasoning dimmed, one line per tool
// call (kept up to date in place on a terminal), the plan, permission
// questions, a spinner while the agent is silent, and the usage at the end.
// Colours only on a terminal, and never when NO_COLOR is set.
//
// --terminals lets the agent run commands through the client
// (terminal/create and the rest of terminal/*: in the workspace, in Build
// and Full mode only, without a shell, with a small base environment) and
// shows every command the agent runs live: its last lines
// under its tool row (redrawn in place on a terminal; without one, each
// line as it completes, indented) and, once it ends, its last lines and a
// failure's exit status. It asks agents that run commands themselves to
// report their output (claude-agent-acp and codex-acp:
// clientCapabilities._meta.terminal_output, bridge.Config.AgentTerminalOutput);
// output that agents report unasked (codex-acp's deltas, the draft
// protocol's terminal updates) is shown either way. With --events
// stdout carries one JSON object per event instead: the bridge's Event in
// its one JSON form (json.Marshal of bridge.Event, documented with an
// example per kind in the bridge package doc, "Event JSON"), the same form
// its journal and subscribers use. The common keys are pos, bridge (the
// host's id of the agent, "agent-1"), key (the session's host key),
// session, seq, turn, kind, time, replay and late; a failure is
// error {message, code}. The kinds are the bridge's (text, thinking,
// tool_start, tool_update, tool_end, permission, decision, plan, todos,
// usage, session, turn_start, turn_end, error, exited, ext, …). How a
// permission request was answered is the bridge's decision event that
// follows it ("by":"app" for --approve, "policy" for --mode).
// Diagnostics always go to stderr.
//
// # Exit status
//
//	0    the turn ended with end_turn (also when a permission was rejected
//	     and the agent then ended its turn normally)
//	1    the turn ended for another reason (max_tokens, refusal, …) or failed
//	2    bad usage
//	3    the agent program was not found
//	4    the agent did not complete the handshake (initialize, session setup)
//	5    the agent requires a sign-in acprun could not perform (see --auth)
//	6    the agent died during the turn
//	7    the agent was silent for longer than --timeout
//	130  cancelled with Ctrl-C: acprun sends session/cancel, lets the turn
//	     settle and exits; a second Ctrl-C exits at once
//
// Every non-zero status comes with a one-line reason on stderr.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/bridge"
	"github.com/acphost/acphost/bridge/profiles"
	"github.com/acphost/acphost/bridge/terminal"
	"github.com/acphost/acphost/checkpoint"
	"github.com/acphost/acphost/examples/internal/cmdline"
	"github.com/acphost/acphost/examples/internal/demoagent"
	"github.com/acphost/acphost/examples/internal/sshflags"
	"github.com/acphost/acphost/fsroot"
)

// Exit statuses; see the package documentation.
const (
	exitOK          = 0
	exitFailed      = 1
	exitUsage       = 2
	exitNotFound    = 3
	exitHandshake   = 4
	exitAuth        = 5
	exitDied        = 6
	exitTimeout     = 7
	exitInterrupted = 130
)

// shutdownGrace bounds how long acprun waits for agents to end and the
// remaining events to be shown.
const shutdownGrace = 5 * time.Second

// options are the command line.
type options struct {
	agent, provider, cwd, ssh, sshKey      string
	sshKnownHosts                          string
	resume, model, effort, agentMode, auth string
	mode, approve                          string
	journal                                string // --journal; "" is the default file
	resumeKey                              string // the journaled session --resume names
	moveCwd                                bool   // --move-cwd: a resumed session moves to --cwd
	timeout                                time.Duration
	events, verbose, terminals, json       bool
	env                                    envFlags // --env, repeated
	envAll                                 bool     // --env-all
	allowAutonomous                        bool     // --allow-autonomous
	turn                                   uint64   // --turn: fork from the state before this turn; changes, restore: the turn
	transcript                             bool     // --transcript: a transcript fork where the agent cannot fork
	checkpoints                            bool     // --checkpoints: record the workspace around turns
	diff, force                            bool     // changes --diff, restore --force

	command string   // "", or the subcommand: doctor, sessions, history, fork
	args    []string // the prompt words, or the subcommand's arguments
}

// exitError is a failure with its exit status and one-line reason.
type exitError struct {
	code   int
	reason string
}

func (e *exitError) Error() string { return e.reason }

func fail(code int, format string, args ...any) *exitError {
	return &exitError{code: code, reason: oneLine(fmt.Sprintf(format, args...))}
}

func main() {
	code := run(os.Args[1:])
	os.Exit(code)
}

func run(args []string) int {
	opts, err := parseArgs(args, os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err != nil {
		help := "acprun -h"
		if ue, ok := errors.AsType[*usageError](err); ok {
			help = ue.help
		}
		fmt.Fprintf(os.Stderr, "acprun: %s (see %s)\n", oneLine(err.Error()), help)
		return exitUsage
	}
	switch opts.command {
	case "doctor":
		err = runDoctor(opts, os.Stdout, os.Stderr)
	case "sessions":
		err = runSessions(opts, os.Stdout)
	case "history":
		err = runHistory(opts, os.Stdout, os.Stderr, palette{on: useColor(isTerminal(os.Stdout)) && !opts.events})
	case "fork":
		err = runFork(opts, os.Stdout, os.Stderr)
	case "chat":
		err = runChat(opts)
	case "changes":
		err = runChanges(opts, os.Stdout)
	case "restore":
		err = runRestore(opts, os.Stdout)
	default:
		err = runTurn(opts)
	}
	var ee *exitError
	if errors.As(err, &ee) {
		fmt.Fprintf(os.Stderr, "acprun: %s\n", ee.reason)
		return ee.code
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "acprun: %s\n", oneLine(err.Error()))
		return exitFailed
	}
	return exitOK
}

const usageText = `usage: acprun [flags] "prompt"
       acprun doctor [flags] [PROVIDER…]
       acprun sessions [--journal FILE] [--events]
       acprun history [--journal FILE] [--events] SESSION
       acprun fork [flags] SESSION [--turn N] [--transcript]
       acprun chat [flags] (prompts on stdin, one a line; see acprun chat -h)
       acprun changes [--journal FILE] [--turn N] [--diff] [--events] SESSION
       acprun restore [--journal FILE] --turn N [--force] SESSION

Runs one turn of an ACP agent (the built-in demo agent unless --provider or
--agent is given) in the workspace --cwd and shows it. The prompt may also
come on stdin when stdin is not a terminal.

flags:
`

func parseArgs(args []string, stderr io.Writer) (*options, error) {
	if len(args) > 0 && args[0] == "doctor" {
		return parseDoctorArgs(args[1:], stderr)
	}
	o := &options{}
	fs := flag.NewFlagSet("acprun", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var words []string // the prompt words, or the subcommand and its arguments
	fs.Usage = func() {
		if len(words) > 0 && printSubcommandHelp(stderr, fs, words[0]) {
			return
		}
		fmt.Fprint(stderr, usageText)
		fs.PrintDefaults()
	}
	fs.StringVar(&o.agent, "agent", "", "run this ACP agent command, e.g. 'gemini --acp' (quotes respected, no shell)")
	fs.StringVar(&o.provider, "provider", "", "run a built-in agent profile: "+strings.Join(profileNames(), ", "))
	fs.StringVar(&o.cwd, "cwd", "", "the workspace directory; the agent may only touch files inside it (default: the current directory)")
	fs.StringVar(&o.ssh, "ssh", "", "run the agent on `user@host[:port]` and serve files over SFTP (needs an absolute remote --cwd)")
	fs.StringVar(&o.sshKey, "ssh-key", "", "private key `file` for --ssh (default: ssh-agent and unencrypted ~/.ssh/id_* keys)")
	fs.StringVar(&o.sshKnownHosts, "ssh-known-hosts", "", "known_hosts `file` that verifies the --ssh host (default ~/.ssh/known_hosts)")
	fs.StringVar(&o.resume, "resume", "", "continue the journaled `SESSION` (its key from acprun sessions, or the agent's own session id)")
	fs.BoolVar(&o.moveCwd, "move-cwd", false, "with --resume: move the session to --cwd instead of refusing a directory other than the one it was recorded in")
	fs.StringVar(&o.journal, "journal", "", "the journal `FILE` that keeps sessions and their events (default $XDG_DATA_HOME/acphost/journal.db)")
	fs.StringVar(&o.model, "model", "", "the model to select")
	fs.StringVar(&o.effort, "effort", "", "the reasoning effort to select")
	fs.StringVar(&o.agentMode, "agent-mode", "", "the agent's own session `MODE_ID` (CrewCoder: its --mode profile; kiro: its --agent)")
	fs.StringVar(&o.auth, "auth", "", "sign in with `METHOD_ID` when the agent asks (env_var methods read their variables from the environment)")
	fs.StringVar(&o.mode, "mode", string(bridge.ModeBuild), "the host's execution mode: ask, plan, build or full")
	fs.BoolVar(&o.allowAutonomous, "allow-autonomous", false, "let an agent that acts without asking, and cannot be moved to a mode that asks, run in build mode (asked on a terminal, refused otherwise)")
	fs.StringVar(&o.approve, "approve", "", "answer permission requests in build mode: ask, allow or reject (default: ask on a terminal, reject otherwise)")
	fs.DurationVar(&o.timeout, "timeout", bridge.DefaultInactivityTimeout, "give up when the agent shows no sign of life for this long")
	fs.BoolVar(&o.events, "events", false, "print the event stream as JSON lines on stdout")
	fs.BoolVar(&o.json, "json", false, "doctor: print the reports as JSON on stdout instead of the table")
	fs.BoolVar(&o.terminals, "terminals", false, "let the agent run commands through acprun (terminal/*, Build and Full mode) and show every command's output live under its tool row")
	fs.Var(&o.env, "env", "pass the agent `NAME` from this environment (or every NAME* of a prefix), or set NAME=VALUE; repeat it (the agent gets a minimal environment otherwise: see acprun -h)")
	fs.BoolVar(&o.envAll, "env-all", false, "pass a local agent acprun's whole environment instead of the minimal one")
	fs.Uint64Var(&o.turn, "turn", 0, "fork: fork from the state before turn `N` (default: the end of the session); changes, restore: the turn N")
	fs.BoolVar(&o.transcript, "transcript", false, "fork: where the agent cannot fork (at --turn), make a new session whose first prompt carries a transcript of the earlier turns")
	fs.BoolVar(&o.checkpoints, "checkpoints", true, "record the workspace with git before and after every turn (for acprun changes and restore); =false turns it off")
	fs.BoolVar(&o.diff, "diff", false, "changes: add each turn's unified diff")
	fs.BoolVar(&o.force, "force", false, "restore: overwrite files changed since the last turn")
	fs.BoolVar(&o.verbose, "v", false, "log diagnostics of the library and every JSON-RPC line in (<-) and out (->) on stderr")

	// Flags may come before and after the prompt words; "--" ends them.
	var rest []string
	if i := slices.Index(args, "--"); i >= 0 {
		args, rest = args[:i], args[i+1:]
	}
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			break
		}
		words = append(words, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if len(words) > 0 && words[0] == "doctor" {
		// Flags before the word would be the turn's, which doctor ignores.
		return nil, &usageError{err: errors.New("doctor's flags come after it: acprun doctor [flags] [PROVIDER…]"), help: "acprun doctor -h"}
	}
	if len(words) > 0 && slices.Contains([]string{"sessions", "history", "fork", "chat", "changes", "restore"}, words[0]) {
		o.command, words = words[0], words[1:]
	}
	o.args = append(words, rest...)

	switch bridge.Mode(o.mode) {
	case bridge.ModeAsk, bridge.ModePlan, bridge.ModeBuild, bridge.ModeFull:
	default:
		return nil, fmt.Errorf("--mode %q: want ask, plan, build or full", o.mode)
	}
	switch o.approve {
	case "", approveAsk, approveAllow, approveReject:
	default:
		return nil, fmt.Errorf("--approve %q: want ask, allow or reject", o.approve)
	}
	if o.agent != "" && o.provider != "" {
		return nil, errors.New("--agent and --provider exclude each other")
	}
	if o.envAll && o.ssh != "" {
		return nil, errors.New("--env-all is for local agents: an agent on an SSH host gets the SSH server's environment and what --env sets")
	}
	if o.timeout <= 0 {
		return nil, fmt.Errorf("--timeout %v: must be positive", o.timeout)
	}
	return o, nil
}

func profileNames() []string {
	var names []string
	for _, p := range profiles.All() {
		names = append(names, p.Name)
	}
	return names
}

// runTurn starts the agent, opens a session, runs one turn and shows it.
func runTurn(o *options) (err error) {
	stdinTTY, stdoutTTY := isTerminal(os.Stdin), isTerminal(os.Stdout)
	prompt := strings.Join(o.args, " ")
	if prompt == "" && !stdinTTY {
		data, err := io.ReadAll(os.Stdin)
		if err != nil {
			return fail(exitUsage, "reading the prompt from stdin: %v", err)
		}
		prompt = strings.TrimSpace(string(data))
	}
	if prompt == "" {
		return fail(exitUsage, `no prompt: acprun [flags] "prompt" (see acprun -h)`)
	}
	if o.approve == "" {
		o.approve = approveReject
		if stdinTTY {
			o.approve = approveAsk
		}
	}

	// The first Ctrl-C cancels: during setup at once, during the turn by
	// session/cancel (Prompt returns when the agent has settled). A second
	// one exits without waiting.
	setupCtx, cancelSetup := context.WithTimeout(context.Background(), o.timeout)
	defer cancelSetup()
	turnCtx, cancelTurn := context.WithCancel(context.Background())
	defer cancelTurn()
	interrupted := make(chan struct{})
	signals := make(chan os.Signal, 2)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(signals)
	go func() {
		if _, ok := <-signals; !ok {
			return
		}
		close(interrupted)
		cancelSetup()
		cancelTurn()
		fmt.Fprintln(os.Stderr, "\nacprun: cancelling the turn (Ctrl-C again to quit at once)")
		if _, ok := <-signals; ok {
			os.Exit(exitInterrupted)
		}
	}()
	wasInterrupted := func() bool {
		select {
		case <-interrupted:
			return true
		default:
			return false
		}
	}

	colors := palette{on: useColor(stdoutTTY) && !o.events}
	var out output
	var screen *human // the human output, when it is one
	if o.events {
		out = newJSONOutput(os.Stdout)
	} else {
		screen = newHuman(os.Stdout, os.Stderr, stdoutTTY, colors)
		out = screen
	}
	approve := &approver{policy: o.approve, prompt: os.Stderr, stdin: &lineReader{in: os.Stdin}, colors: palette{on: useColor(isTerminal(os.Stderr))}}
	auth := &signer{method: o.auth}

	db, err := startJournal(setupCtx, o)
	if err != nil {
		return err
	}
	defer func() {
		// Close commits what the commit delay still holds: its failure
		// means journaled events are lost, which the run must say.
		if cerr := db.Close(); cerr != nil && err == nil {
			err = fail(exitFailed, "journal: %v", cerr)
		}
	}()
	host := bridge.NewHost(hostOptions(db))
	var closers []io.Closer
	finish := showEvents(host, out, approve, auth, nil, &closers)

	sess, err := openSession(setupCtx, o, host, stdinTTY, &closers)
	if screen != nil {
		screen.setResumable(agentCanResume(host))
	}
	if jerr := db.opened(); jerr != nil {
		// The session could not be journaled: say why rather than what
		// failed after it.
		finish()
		return jerr
	}
	if err != nil {
		finish()
		switch {
		case wasInterrupted():
			return fail(exitInterrupted, "cancelled")
		case auth.reason() != "":
			return fail(exitAuth, "auth required: %s", auth.reason())
		}
		return setupFailure(err, o.timeout)
	}
	con := &consenter{allow: o.allowAutonomous, ask: stdinTTY, prompt: os.Stderr, stdin: approve.stdin, colors: approve.colors}
	if err := con.settle(setupCtx, sess); err != nil {
		finish()
		if wasInterrupted() {
			return fail(exitInterrupted, "cancelled")
		}
		return err
	}
	stop, err := sess.Prompt(turnCtx, acpclient.TextBlock(prompt))
	finish()
	return turnOutcome(stop, err, wasInterrupted(), auth.reason())
}

// openSession starts the agent o names and opens a session in the
// workspace. Files and connections to release are added to closers.
func openSession(ctx context.Context, o *options, host *bridge.Host, stdinTTY bool, closers *[]io.Closer) (*bridge.Session, error) {
	cfg := bridge.Config{
		InactivityTimeout: o.timeout,
		ClientInfo:        &acpclient.Implementation{Name: "acprun", Title: "acphost acprun", Version: "0.1.0"},
	}
	if o.verbose {
		cfg.Logger, cfg.WireTrace = newVerboseLogger(os.Stderr), true
	}
	if stdinTTY {
		cfg.TerminalLogin = terminalLogin
	}
	// Agents report the output of the commands they run themselves (the
	// _meta extension of claude-agent-acp and codex-acp) only when asked;
	// and the bridge runs the commands agents ask it to run (terminal/*)
	// only when it offers terminals. Both come with --terminals.
	cfg.AgentTerminalOutput = o.terminals
	if o.terminals {
		cfg.Terminals = &terminal.Options{}
	}
	sc := bridge.SessionConfig{
		Key: o.resumeKey, ResumeID: o.resume, Model: o.model, Effort: o.effort, MoveCwd: o.moveCwd,
		Policy: bridge.Policy{Mode: bridge.Mode(o.mode)},
	}
	if o.checkpoints && (o.ssh != "" || hasGit()) {
		sc.Checkpoints = &checkpoint.Options{}
	}
	var b *bridge.Bridge
	var setMode string
	var err error
	if o.ssh != "" {
		b, sc.Cwd, sc.Files, err = startRemote(ctx, o, host, cfg, closers)
		setMode = o.agentMode
	} else {
		b, sc.Cwd, sc.Files, setMode, err = startLocal(ctx, o, host, cfg, closers)
	}
	if err != nil {
		return nil, err
	}

	sess, err := b.OpenSession(ctx, sc)
	if err != nil {
		return nil, err
	}
	if setMode != "" {
		if err := sess.SetAgentMode(ctx, setMode); err != nil {
			return nil, fail(exitFailed, "--agent-mode %q: %v", setMode, err)
		}
	}
	limitProcs() // the setup's work side by side is done: turns follow
	return sess, nil
}

// startLocal starts the agent o names in the local workspace --cwd and
// returns the root that serves its files there, and the agent mode still to
// set with session/set_mode. It returns a bridge or an error, never neither.
// A profile's agent starts here; an --agent command or the demo is only
// added (bridge.Host.Add): the session opened on it starts it, and records
// the workspace's first checkpoint while it starts.
func startLocal(ctx context.Context, o *options, host *bridge.Host, cfg bridge.Config, closers *[]io.Closer) (*bridge.Bridge, string, bridge.Files, string, error) {
	cwd, err := workspace(o.cwd)
	if err != nil {
		return nil, "", nil, "", err
	}
	files, err := fsroot.NewLocal(cwd, nil)
	if err != nil {
		return nil, "", nil, "", fail(exitUsage, "--cwd: %v", err)
	}
	*closers = append(*closers, files)
	setMode := o.agentMode
	var b *bridge.Bridge
	switch {
	case o.provider != "":
		p, ok := profiles.Lookup(o.provider)
		if !ok {
			return nil, "", nil, "", fail(exitUsage, "--provider %q: unknown; the profiles are %s", o.provider, strings.Join(profileNames(), ", "))
		}
		launch := bridge.LaunchOptions{Cwd: cwd, Model: o.model, Effort: o.effort, Env: agentEnv(o, os.Environ(), p.EnvNames)}
		setMode = launchAgentMode(p, &launch, o.agentMode)
		cfg.ID = p.Name
		b, err = host.StartProfile(ctx, p, launch, cfg)
	case o.agent != "":
		argv, serr := cmdline.Split(o.agent)
		if serr != nil {
			return nil, "", nil, "", fail(exitUsage, "--agent %q: %v", o.agent, serr)
		}
		cfg.ID = filepath.Base(argv[0])
		cfg.Transport = &acpclient.CommandTransport{Path: argv[0], Args: argv[1:], Dir: cwd, Env: agentEnv(o, os.Environ(), nil)}
		b, err = host.Add(cfg) // OpenSession starts it, and records the workspace meanwhile
	default:
		cfg.ID = "demo"
		cfg.Transport = &demoagent.Transport{ResumeID: o.resume}
		cfg.AgentModes = demoagent.Modes()
		b, err = host.Add(cfg)
	}
	if err != nil {
		return nil, "", nil, "", err
	}
	return b, cwd, files, setMode, nil
}

// launchAgentMode applies --agent-mode to the launch of profiles that take
// the agent's mode when it starts (the profile says which modes) and
// returns the mode still to set with session/set_mode.
func launchAgentMode(p *bridge.Profile, launch *bridge.LaunchOptions, mode string) string {
	if p.TakesAgentMode(mode) {
		launch.AgentMode = mode
		return ""
	}
	return mode
}

// resumeCwd makes a resumed session run where it was recorded: without
// --cwd that directory is the workspace; a --cwd elsewhere is refused by
// the library (bridge.ErrCwdChanged) unless --move-cwd moves the session.
func resumeCwd(o *options, recorded string) error {
	if recorded == "" || o.cwd != "" {
		return nil
	}
	if o.ssh == "" {
		if fi, err := os.Stat(recorded); err != nil || !fi.IsDir() {
			return fail(exitUsage, "--resume: the session was recorded in %s, which is no longer a directory; move it with --cwd DIR --move-cwd", recorded)
		}
	}
	o.cwd = recorded
	return nil
}

// workspace returns the absolute, existing directory --cwd names.
func workspace(dir string) (string, error) {
	if dir == "" {
		dir = "."
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fail(exitUsage, "--cwd %q: %v", dir, err)
	}
	if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
		return "", fail(exitUsage, "--cwd %q: not a directory", dir)
	}
	return abs, nil
}

// startRemote starts the agent on an SSH host, in the remote workspace,
// and returns the SFTP root that serves its files there.
func startRemote(ctx context.Context, o *options, host *bridge.Host, cfg bridge.Config, closers *[]io.Closer) (*bridge.Bridge, string, bridge.Files, error) {
	if o.agent == "" && o.provider == "" {
		return nil, "", nil, fail(exitUsage, "--ssh needs --agent or --provider: the demo agent runs in this process")
	}
	if !strings.HasPrefix(o.cwd, "/") {
		return nil, "", nil, fail(exitUsage, "--ssh needs --cwd with the absolute workspace path on the remote host")
	}
	target, err := sshflags.Target(o.ssh)
	if err != nil {
		return nil, "", nil, fail(exitUsage, "--ssh %q: %v", o.ssh, err)
	}
	dial, err := sshflags.DialConfig(o.sshKey, o.sshKnownHosts)
	if err != nil {
		return nil, "", nil, fail(exitUsage, "--ssh-key: %v", err)
	}
	ws := bridge.Workspace{Path: filepath.ToSlash(filepath.Clean(o.cwd)), SSH: &target}
	hosts := bridge.NewSSHHosts(dial)
	*closers = append(*closers, closerFunc(hosts.Close))

	files, err := hosts.Files(ctx, ws)
	if err != nil {
		return nil, "", nil, fail(exitHandshake, "connecting to %s: %v", target, err)
	}
	*closers = append(*closers, files)
	b, err := startRemoteAgent(ctx, o, host, cfg, hosts, ws)
	if err != nil {
		return nil, "", nil, err
	}
	return b, ws.Path, files, nil
}

// startRemoteAgent starts the --agent command or the --provider profile on
// the SSH host of ws. It returns a bridge or an error, never neither.
func startRemoteAgent(ctx context.Context, o *options, host *bridge.Host, cfg bridge.Config, hosts *bridge.SSHHosts, ws bridge.Workspace) (*bridge.Bridge, error) {
	if o.agent != "" {
		argv, err := cmdline.Split(o.agent)
		if err != nil {
			return nil, fail(exitUsage, "--agent %q: %v", o.agent, err)
		}
		cfg.ID = filepath.Base(argv[0])
		if cfg.Transport, err = hosts.Transport(ws, argv, remoteEnv(o, os.Environ())); err != nil {
			return nil, err
		}
		return host.Start(ctx, cfg)
	}
	p, ok := profiles.Lookup(o.provider)
	if !ok {
		return nil, fail(exitUsage, "--provider %q: unknown; the profiles are %s", o.provider, strings.Join(profileNames(), ", "))
	}
	// The remote shell finds the program; overlays and resume checks use
	// the host's files.
	launch := bridge.LaunchOptions{Cwd: ws.Path, Model: o.model, Effort: o.effort, Env: remoteEnv(o, os.Environ()),
		SSH: &bridge.SSHLaunch{Hosts: hosts, Target: *ws.SSH}}
	o.agentMode = launchAgentMode(p, &launch, o.agentMode)
	cfg.ID = p.Name
	return host.StartProfile(ctx, p, launch, cfg)
}

type closerFunc func() error

func (f closerFunc) Close() error { return f() }

// setupFailure classifies a failure to start the agent or open the session.
func setupFailure(err error, timeout time.Duration) error {
	var ee *exitError
	switch {
	case errors.As(err, &ee):
		return ee
	case errors.Is(err, acpclient.ErrAgentNotFound):
		return fail(exitNotFound, "agent not found: %v", err)
	case errors.Is(err, bridge.ErrAuthRequired), acpclient.IsAuthRequired(err):
		return fail(exitAuth, "auth required: %v (pass --auth METHOD_ID)%s", err, errWithheldHint(err))
	case errors.Is(err, context.DeadlineExceeded):
		return fail(exitTimeout, "timeout: the agent did not finish starting within %v", timeout)
	case errors.Is(err, bridge.ErrCwdChanged):
		return fail(exitUsage, "--resume: %v; leave out --cwd to keep it there, or add --move-cwd to move it", err)
	}
	return fail(exitHandshake, "handshake failed: %v%s", err, errWithheldHint(err))
}

// turnOutcome turns Prompt's result into the exit status.
func turnOutcome(stop string, err error, interrupted bool, authFailure string) error {
	var exit *acpclient.ExitError
	switch {
	case err == nil && stop == acpclient.StopEndTurn:
		return nil
	case interrupted:
		return fail(exitInterrupted, "cancelled")
	case err == nil:
		return fail(exitFailed, "the turn ended with %s, not end_turn", stop)
	case errors.Is(err, bridge.ErrInactive):
		return fail(exitTimeout, "timeout: %v", err)
	case authFailure != "":
		return fail(exitAuth, "auth required: %s", authFailure)
	case errors.Is(err, bridge.ErrAuthRequired), acpclient.IsAuthRequired(err):
		return fail(exitAuth, "auth required: %v (pass --auth METHOD_ID)%s", err, errWithheldHint(err))
	case errors.As(err, &exit), errors.Is(err, acpclient.ErrClosed):
		return fail(exitDied, "agent died: %v", err)
	}
	return fail(exitFailed, "the turn failed: %v", err)
}

// answered reports whether a permission request was answered already, as
// the ones the policy settles by itself are when their event arrives.
func answered(p *bridge.PermissionRequest) bool {
	if p == nil {
		return true
	}
	select {
	case <-p.Done():
		return true
	default:
		return false
	}
}
