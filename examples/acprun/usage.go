package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/acphost/acphost/bridge"
)

// subFlag is a flag a subcommand reads, with what it means there and its
// default there ("": as for a turn).
type subFlag struct{ name, usage, def string }

// subcommandHelp is what "acprun SUBCOMMAND -h" prints: the usage and
// description of the subcommand, and the flags it reads. ok is false for
// a word that is no subcommand.
func subcommandHelp(command string) (text string, flags []subFlag, ok bool) {
	switch command {
	case "doctor":
		return `usage: acprun doctor [flags] [PROVIDER…]

Checks the agents of the built-in profiles (those named, else all): where
the program is, its version, whether it answers ACP's initialize, how the
user signs in and which models it lists. It starts each agent as a turn
would (the same minimal environment, see --env) and ends it. A line on
stderr says when each check ends; the table (or --json) goes to stdout,
fitted to 100 columns, with what is missing below it.

The exit status is 0 when every provider named is ready (always, when none
is named), 3 when one named is not installed, 1 when one is installed but
not ready, 7 when one did not answer initialize in the time given (slow,
not known to be broken), 2 for bad usage. The providers are probed at once;
a probe that takes longer than --timeout is reported slow, not failed.

--json prints one JSON array, an object per provider: provider, status
(the table's word: ok, warn, slow, failing, missing), ready
(no check failed), binary {path, name, source, searched} (absent when not
found), version, acp (it answered initialize), agentInfo {name, title,
version}, authMethods [{id, name, description, …}], signIn (signed_in,
signed_out, not_required, unknown), account, models {currentModelId,
availableModels [{modelId, name, …}]}, findings [{check, status (ok, warn,
slow, fail), message, timedOut}] and missing [what to do].

flags:
`, []subFlag{
				{"json", "print the reports as JSON on stdout instead of the table", ""},
				{"timeout", "report a probe of a provider (--version, its status command, initialize) slow after this long, at most the default; it is given up after three times as long", bridge.DefaultDoctorTimeout.String()},
				{"env", "", ""}, {"env-all", "", ""},
			}, true
	case "sessions":
		return `usage: acprun sessions [flags]

Lists the journaled sessions, most recent first, with their keys whole.

flags:
`, []subFlag{{"journal", "", ""}, {"events", "print JSON lines instead of text", ""}}, true
	case "chat":
		return chatHelp, chatFlags, true
	case "history":
		return `usage: acprun history [flags] SESSION

Prints a journaled session (its key, or an id the agent gave it): the
prompts, replies, tool rows and decisions.

flags:
`, []subFlag{{"journal", "", ""}, {"events", "print JSON lines instead of text", ""}}, true
	case "fork":
		return forkUsage, forkHelpFlags, true
	case "changes":
		return `usage: acprun changes [flags] SESSION

Prints what the turns of a journaled session changed in its workspace: a
line per file, its status letter (A added, M modified, D deleted, R
renamed) and its path, each turn under a "turn N" line unless --turn
picks one. --diff adds each turn's unified diff from the session's
checkpoints (for a session on an SSH host, give --ssh and its key flags).

flags:
`, []subFlag{{"journal", "", ""}, {"turn", "", ""}, {"diff", "", ""}, {"events", "print the changes events as JSON lines instead", ""},
				{"ssh", "the SSH host of a remote session, for --diff", ""}, {"ssh-key", "", ""}, {"ssh-known-hosts", "", ""}}, true
	case "restore":
		return `usage: acprun restore [flags] --turn N SESSION

Brings a journaled session's workspace back to its state before turn N,
records the workspace first (the journaled restore names that checkpoint,
so it can be undone), and prints the files it changed. A file changed
since the session's last turn is a conflict: nothing changes, unless
--force. It needs the journal for writing, so no turn runs meanwhile.

flags:
`, []subFlag{{"journal", "", ""}, {"turn", "", ""}, {"force", "", ""},
				{"ssh", "the SSH host of a remote session", ""}, {"ssh-key", "", ""}, {"ssh-known-hosts", "", ""}}, true
	}
	return "", nil, false
}

// printSubcommandHelp prints the help of command with the flags of fs it
// reads, their defaults as defined.
func printSubcommandHelp(w io.Writer, fs *flag.FlagSet, command string) bool {
	text, flags, ok := subcommandHelp(command)
	if !ok {
		return false
	}
	fmt.Fprint(w, text)
	own := flag.NewFlagSet(command, flag.ContinueOnError)
	own.SetOutput(w)
	for _, sf := range flags {
		if f := fs.Lookup(sf.name); f != nil {
			own.Var(f.Value, f.Name, cmpOr(sf.usage, f.Usage))
			own.Lookup(f.Name).DefValue = cmpOr(sf.def, f.DefValue)
		}
	}
	own.PrintDefaults()
	return true
}

func cmpOr(s, fallback string) string {
	if s == "" {
		return fallback
	}
	return s
}
