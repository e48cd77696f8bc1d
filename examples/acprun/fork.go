package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/acphost/acphost/bridge"
)

// runFork forks a journaled session ("acprun fork SESSION [--turn N]"): it
// starts the agent the flags name, opens the session (loading the agent's
// own session, as --resume does), asks the agent to fork it and prints the
// new session's key on stdout. --turn N forks from the state before turn
// N, which only an agent that can fork at an earlier point can do; before
// the next turn (the session's turns + 1) is its end. --transcript makes a
// transcript fork where the agent cannot (bridge.ForkOptions.Transcript):
// a new session whose first prompt carries the earlier turns as a marked
// transcript. Nothing runs a
// turn: "acprun --resume KEY PROMPT" continues the fork, "acprun history
// KEY" shows the parent's history up to the fork, then the fork's own.
func runFork(o *options, stdout, diag io.Writer) (err error) {
	if len(o.args) != 1 {
		return fail(exitUsage, "usage: acprun fork [flags] SESSION [--turn N] (a key from acprun sessions)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), o.timeout)
	defer cancel()
	db, err := openJournal(ctx, o, false)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := db.Close(); cerr != nil && err == nil {
			err = fail(exitFailed, "journal: %v", cerr)
		}
	}()
	rec, found, err := findSession(ctx, db, o.args[0])
	switch {
	case errors.Is(err, bridge.ErrAmbiguousSession):
		return fail(exitUsage, "fork: %v", err)
	case err != nil:
		return fail(exitFailed, "fork: reading the journal: %v", err)
	case !found:
		return fail(exitUsage, "fork: no session %q in the journal (see acprun sessions)", o.args[0])
	}
	o.resumeKey, o.resume = rec.Key, rec.NativeSessionID
	if err := resumeCwd(o, rec.Cwd); err != nil {
		return err
	}

	host := bridge.NewHost(&bridge.HostOptions{Journal: db})
	shown := make(chan struct{})
	go func() {
		defer close(shown)
		for ev := range host.Events() {
			if ev.Kind == bridge.KindError || ev.Kind == bridge.KindExited && ev.Err != nil {
				fmt.Fprintf(diag, "acprun: %s\n", oneLine(ev.Err.Error()))
			}
		}
	}()
	var closers []io.Closer
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
		defer cancel()
		host.Shutdown(ctx)
		<-shown
		for _, c := range slices.Backward(closers) {
			c.Close()
		}
	}()
	parent, err := openSession(ctx, o, host, false, &closers)
	if err != nil {
		return setupFailure(err, o.timeout)
	}
	// CanFork first: it says why an agent cannot before anything is sent.
	if err := parent.CanFork(o.turn); err != nil && !o.transcript {
		return fail(exitFailed, "fork: %v (--transcript makes a transcript fork instead)", err)
	}
	child, err := parent.Fork(ctx, bridge.ForkOptions{BeforeTurn: o.turn, Transcript: o.transcript})
	if err != nil {
		return fail(exitFailed, "fork: %v", err)
	}
	fmt.Fprintln(stdout, child.Key())
	how := "forked"
	if child.Ready().Fork.Transcript {
		how = "made a transcript fork of" // the agent could not fork
	}
	fmt.Fprintf(diag, "%s session %s after its turn %d: %s (continue it with --resume %s)\n",
		how, shellWord(rec.Key), child.Ready().Fork.AfterTurn, shellWord(child.Key()), shellWord(child.Key()))
	return nil
}

// forkUsage is "acprun fork -h".
const forkUsage = `usage: acprun fork [flags] SESSION [--turn N]

Forks a journaled session (its key, or an id the agent gave it) into a new
session and prints the new session's key on stdout. The agent (chosen with
--agent or --provider, as for a turn) must advertise session/fork. The fork
holds the conversation so far; "acprun history KEY" shows the session's
history up to the fork, then the fork's own, and --resume KEY continues it.

--turn N forks from the state before turn N, to send that turn's message
again, edited. The agent must be able to fork at that point; no ACP call
does that today, so a turn before the session's end is refused, saying so.

--transcript makes a transcript fork where the agent cannot fork (at --turn
or at all): a new session whose first prompt carries a transcript of the
turns before the point ahead of your message, marked as such (history shows
it). The agent gets the conversation as text, not its tool results or state.

flags:
`

// forkHelpFlags are the flags fork reads.
var forkHelpFlags = []subFlag{
	{"turn", "", ""}, {"transcript", "", ""}, {"journal", "", ""}, {"agent", "", ""}, {"provider", "", ""},
	{"cwd", "", ""}, {"timeout", "", ""}, {"env", "", ""}, {"env-all", "", ""}, {"v", "", ""},
}
