// Command webui hosts coding agents that speak the Agent Client Protocol
// (ACP) behind a local web page: the reference app for embedding acphost in
// a window, and an inspector for developers debugging an agent.
//
//	go run ./examples/webui
//
// It listens on 127.0.0.1, on a free port, and prints the page's address
// with a random token in its query string (?token=…). Every request, page,
// API or event stream, must carry that token (in the query, in the cookie
// the page sets, or as "Authorization: Bearer TOKEN"): without it the answer
// is 401, with a wrong one 403. The Host header must name 127.0.0.1 or
// localhost (a DNS-rebinding page cannot reach the server), and a POST
// must come from the page's own origin with a JSON body (at most 1 MiB,
// else 413). Every response forbids framing (X-Frame-Options: DENY, CSP
// frame-ancestors 'none') and the page runs its own script and style only.
// Agents' links (a question's URL, a sign-in's key page) are links only
// when they are http or https.
//
// The agents are fixed when the server starts: the built-in demo agent
// (package demoagent) unless others are given, each --provider NAME (a
// built-in profile) and each --agent 'COMMAND ARGS…' (split like a shell
// would, but no shell runs). The page starts sessions of these agents by
// name only: nothing it sends becomes a command line.
//
// Every event of every agent goes to the journal (--journal, default
// $XDG_DATA_HOME/acphost/journal.db), which the page's session list, its
// history and its replay come from: the event stream (/api/events,
// Server-Sent Events) carries the bridge's Event JSON with the event's Pos
// as its id, so a reconnecting tab resumes after Last-Event-ID and a tab
// opening a session replays it whole. --cwd is the workspace (the agent may
// read and write only there; a journaled session recorded in a directory
// outside it is listed but not reopened, 403), --ssh user@host[:port] runs the agents on that
// host in the absolute remote --cwd, --terminals lets agents run commands
// through the host, shown live under their tool rows.
//
// A local agent gets a minimal environment (acpclient.MinimalEnv, with a
// profile's vendor variables): --env NAME passes one more on (NAME* every
// one of a prefix), --env NAME=VALUE sets one; on an SSH host these are
// all it gets of webui's. --auth METHOD_ID answers an agent's sign-in
// request with that method, an env_var method with its variables from
// webui's environment; without it, or when that method is not offered,
// the page asks.
//
// # API
//
// The page uses a small JSON API that another client may use too, with
// the token as "Authorization: Bearer TOKEN" (POST bodies are JSON
// objects; unknown fields are refused):
//
//	GET  /api/events?key=&bridge=&after=    the event stream (SSE)
//	GET  /api/agents                        the agents and their state (a crashed one with its exit and stderr)
//	GET  /api/agents/{agent}/inspector      wire trace, stderr, initialize
//	GET  /api/sessions                      the journal's sessions
//	POST /api/sessions {"agent"}            a new session of an agent (name or index)
//	GET  /api/sessions/{key}                one session's state
//	POST /api/sessions/{key}/open           open a journaled session again
//	POST /api/sessions/{key}/prompt {"text"}
//	POST /api/sessions/{key}/cancel
//	POST /api/sessions/{key}/permission {"id","answer":"allow"|"reject"}
//	POST /api/sessions/{key}/elicitation {"id","action","content"}
//	POST /api/sessions/{key}/policy {"mode":"ask"|"plan"|"build"|"full"}
//	POST /api/sessions/{key}/agent-mode {"mode"}
//	POST /api/sessions/{key}/config {"id","value"|"bool"}
//	POST /api/sessions/{key}/compact
//	POST /api/sessions/{key}/close
//	POST /api/sessions/{key}/queue {"text"}            queue a prompt (it runs when no turn does)
//	POST /api/sessions/{key}/queue/move {"id","index"} 0 runs next
//	POST /api/sessions/{key}/queue/remove {"id"}
//	POST /api/sessions/{key}/queue/clear
//	POST /api/sessions/{key}/queue/resume              run a paused queue again
//	POST /api/sessions/{key}/steer {"text","fallback":""|"queue"|"interrupt"}
//	POST /api/sessions/{key}/fork {"beforeTurn","transcript"}  the new session's key
//	POST /api/auth {"agent","id","method","env"|"decline"}  env: only the method's declared variables
//
// A session's state says how it steers (steerMode, "" when the agent
// cannot and the fallback applies), what it can fork (forks: at the end,
// before which turns, why not) and its queue; the list gives each fork its
// parent, so it is drawn as a tree.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/acphost/acphost/bridge/profiles"
	"github.com/acphost/acphost/examples/internal/envflags"
	"github.com/acphost/acphost/journal"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		fmt.Fprintf(os.Stderr, "webui: %v\n", err)
		os.Exit(1)
	}
}

// options are the command line.
type options struct {
	providers, agents            []string
	cwd, ssh, sshKey, knownHosts string
	journal                      string
	terminals                    bool
	env                          envflags.List // --env, repeated
	auth                         string
}

// listFlag is a repeatable string flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ", ") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

func parseArgs(args []string, stderr io.Writer) (*options, error) {
	o := &options{}
	fs := flag.NewFlagSet("webui", flag.ContinueOnError)
	fs.SetOutput(stderr)
	names := make([]string, 0, len(profiles.All()))
	for _, p := range profiles.All() {
		names = append(names, p.Name)
	}
	fs.Var((*listFlag)(&o.providers), "provider", "host a built-in agent `profile` (repeatable): "+strings.Join(names, ", "))
	fs.Var((*listFlag)(&o.agents), "agent", "host this ACP agent `command`, e.g. 'gemini --acp' (repeatable; quotes respected, no shell)")
	fs.StringVar(&o.cwd, "cwd", "", "the workspace `directory`; agents may only touch files inside it (default: the current directory)")
	fs.StringVar(&o.ssh, "ssh", "", "run the agents on `user@host[:port]` and serve files over SFTP (needs an absolute remote --cwd)")
	fs.StringVar(&o.sshKey, "ssh-key", "", "private key `file` for --ssh (default: ssh-agent and unencrypted ~/.ssh/id_* keys)")
	fs.StringVar(&o.knownHosts, "ssh-known-hosts", "", "known_hosts `file` that verifies the --ssh host (default ~/.ssh/known_hosts)")
	fs.StringVar(&o.journal, "journal", "", "the journal `file` of sessions and events (default $XDG_DATA_HOME/acphost/journal.db)")
	fs.Var(&o.env, "env", "pass the agents `NAME` from this environment (or every NAME* of a prefix), or set NAME=VALUE; repeat it (local agents get a minimal environment otherwise)")
	fs.StringVar(&o.auth, "auth", "", "sign in with `METHOD_ID` when an agent asks (env_var methods read their variables from this environment); the page asks otherwise")
	fs.BoolVar(&o.terminals, "terminals", false, "let agents run commands through the host (terminal/*, Build and Full mode) and show their output live")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q (see webui -h)", fs.Args())
	}
	if o.ssh != "" && len(o.providers)+len(o.agents) == 0 {
		return nil, errors.New("--ssh needs --agent or --provider: the demo agent runs in this process")
	}
	return o, nil
}

// run serves the page until ctx ends.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parseArgs(args, stderr)
	if err != nil {
		return err
	}
	specs, err := agentSpecs(o)
	if err != nil {
		return err
	}
	ws, err := newWorkspace(o)
	if err != nil {
		return err
	}
	defer ws.Close()
	path := o.journal
	if path == "" {
		if path, err = journal.DefaultPath(); err != nil {
			return err
		}
	}
	db, err := journal.Open(ctx, path, nil)
	if errors.Is(err, journal.ErrInUse) {
		// The error names the program holding it (acprun, another web UI).
		return fmt.Errorf("%w; give the web UI its own with --journal FILE", err)
	}
	if err != nil {
		return fmt.Errorf("opening the journal: %w", err)
	}
	defer db.Close()

	srv, err := newServer(ctx, serverConfig{Agents: specs, Workspace: ws, Journal: db, Terminals: o.terminals, Checkpoints: gitCanRun(ws), Auth: o.auth, Log: stderr})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "webui: open %s\n", srv.URL())
	<-ctx.Done()
	return srv.Close()
}
