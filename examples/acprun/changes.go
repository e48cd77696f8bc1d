package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"time"

	"github.com/acphost/acphost/bridge"
	"github.com/acphost/acphost/checkpoint"
	"github.com/acphost/acphost/examples/internal/sshflags"
	"github.com/acphost/acphost/journal"
	"github.com/acphost/acphost/sshconn"
)

// runChanges prints what the turns of a journaled session changed in its
// workspace, from the changes events its turns left in the journal: a
// line per file (its status letter and path), every turn under a "turn N"
// line unless --turn picks one; --diff adds each turn's unified diff,
// read from the session's checkpoints (on the --ssh host for a remote
// session); --events prints the events as JSON lines instead.
func runChanges(o *options, w io.Writer) error {
	if len(o.args) != 1 {
		return fail(exitUsage, "usage: acprun changes SESSION [--turn N] [--diff]")
	}
	ctx := context.Background()
	db, rec, err := openSessionJournal(ctx, o, true)
	if err != nil {
		return err
	}
	defer db.Close()
	turns, err := turnChanges(ctx, db, rec.Key, o.turn)
	if err != nil {
		return err
	}
	var store *checkpoint.Store
	if o.diff {
		var done func()
		if store, done, err = openCheckpoints(ctx, o, rec); err != nil {
			return err
		}
		defer done()
	}
	for _, ev := range turns {
		if o.events {
			line, err := ev.AppendJSON(nil)
			if err != nil {
				return err
			}
			if _, err := w.Write(append(line, '\n')); err != nil {
				return err
			}
			continue
		}
		if o.turn == 0 {
			fmt.Fprintf(w, "turn %d\n", ev.Turn)
		}
		printFiles(w, ev.Changes.Files)
		if store != nil {
			diff, err := store.Diff(ctx, ev.Changes.From, ev.Changes.To)
			if err != nil {
				return fail(exitFailed, "diff of turn %d: %v", ev.Turn, err)
			}
			fmt.Fprint(w, diff)
		}
	}
	return nil
}

// runRestore brings a journaled session's workspace back to its state
// before turn --turn, records the restore in the journal as a changes
// event, and prints the files it changed. The journal is opened for
// writing, so no turn of the session runs meanwhile (a program running
// one holds it). A file changed since the session's last turn is a
// conflict that changes nothing, unless --force.
func runRestore(o *options, w io.Writer) error {
	if len(o.args) != 1 || o.turn == 0 {
		return fail(exitUsage, "usage: acprun restore SESSION --turn N [--force]")
	}
	ctx := context.Background()
	db, rec, err := openSessionJournal(ctx, o, false)
	if err != nil {
		return err
	}
	defer db.Close()
	turns, err := turnChanges(ctx, db, rec.Key, o.turn)
	if err != nil {
		return err
	}
	store, done, err := openCheckpoints(ctx, o, rec)
	if err != nil {
		return err
	}
	defer done()
	cp, err := store.Restore(ctx, turns[0].Changes.From, o.force)
	if err != nil {
		return fail(exitFailed, "%v", err)
	}
	files, err := store.Changes(ctx, cp.Undo, cp.ID)
	if err != nil {
		return fail(exitFailed, "the restore is done; listing what it changed: %v", err)
	}
	if err := journalRestore(ctx, db, rec, &bridge.Changes{Op: "restore", Restored: o.turn, From: cp.Undo, To: cp.ID, Files: files}); err != nil {
		return fail(exitFailed, "the restore is done (undo it with the checkpoint %s); journaling it: %v", cp.Undo, err)
	}
	printFiles(w, files)
	return nil
}

// openSessionJournal opens the journal and finds the session o.args[0]
// names.
func openSessionJournal(ctx context.Context, o *options, readOnly bool) (*journal.DB, bridge.Record, error) {
	db, err := openJournal(ctx, o, readOnly)
	if errors.Is(err, errNoJournalYet) {
		return nil, bridge.Record{}, fail(exitUsage, "no session %q: the journal is empty (see acprun sessions)", o.args[0])
	}
	if err != nil {
		return nil, bridge.Record{}, err
	}
	rec, found, err := findSession(ctx, db, o.args[0])
	switch {
	case errors.Is(err, bridge.ErrAmbiguousSession):
		err = fail(exitUsage, "%v", err)
	case err != nil:
		err = fail(exitFailed, "reading the journal: %v", err)
	case !found:
		err = fail(exitUsage, "no session %q in the journal (see acprun sessions)", o.args[0])
	}
	if err != nil {
		db.Close()
		return nil, bridge.Record{}, err
	}
	return db, rec, nil
}

// turnChanges reads the changes events of a session's turns (of turn
// only, unless it is 0), oldest first.
func turnChanges(ctx context.Context, db *journal.DB, key string, turn uint64) ([]bridge.Event, error) {
	var found []bridge.Event
	q := bridge.EventQuery{Key: key}
	for {
		events, err := db.ReadEvents(ctx, q)
		if err != nil {
			return nil, fail(exitFailed, "reading the journal: %v", err)
		}
		if len(events) == 0 {
			break
		}
		for _, ev := range events {
			if ev.Kind == bridge.KindChanges && ev.Changes.Op == "turn" && (turn == 0 || ev.Turn == turn) {
				found = append(found, ev)
			}
		}
		q.After = events[len(events)-1].Pos
	}
	if len(found) == 0 {
		which := ""
		if turn != 0 {
			which = fmt.Sprintf(" in turn %d", turn)
		}
		return nil, fail(exitFailed, "no changes recorded for session %s%s (turns record them with --checkpoints, the default)", key, which)
	}
	return found, nil
}

// openCheckpoints opens the checkpoints a session's turns recorded: in
// the default directory for its workspace and key, on this machine or on
// the --ssh host. done closes the SSH connection.
func openCheckpoints(ctx context.Context, o *options, rec bridge.Record) (store *checkpoint.Store, done func(), err error) {
	opt := checkpoint.Options{Workspace: rec.Cwd, Name: rec.Key}
	done = func() {}
	if o.ssh != "" {
		target, err := sshflags.Target(o.ssh)
		if err != nil {
			return nil, nil, fail(exitUsage, "--ssh %q: %v", o.ssh, err)
		}
		dial, err := sshflags.DialConfig(o.sshKey, o.sshKnownHosts)
		if err != nil {
			return nil, nil, fail(exitUsage, "--ssh-key: %v", err)
		}
		conn := sshconn.New(target, dial)
		done = func() { _ = conn.Close() }
		opt.Runner = checkpoint.SSH{Dial: conn.Client}
	}
	if store, err = checkpoint.Open(ctx, opt); err != nil {
		done()
		return nil, nil, fail(exitFailed, "the session's checkpoints: %v", err)
	}
	return store, done, nil
}

// journalRestore appends a restore's changes event to the session's
// events, numbered after the last ones.
func journalRestore(ctx context.Context, db *journal.DB, rec bridge.Record, ch *bridge.Changes) error {
	pos, err := db.LastPos(ctx)
	if err != nil {
		return err
	}
	seq, err := db.LastSeq(ctx, rec.Key)
	if err != nil {
		return err
	}
	ev := bridge.Event{Pos: pos + 1, Bridge: rec.Bridge, Key: rec.Key, Session: rec.NativeSessionID, Seq: seq + 1,
		Kind: bridge.KindChanges, Time: time.Now().UTC(), Changes: ch}
	return db.Append(ctx, []bridge.Event{ev})
}

// printFiles prints a line per file: its status letter and path (a
// rename: the old path, "->", the new one).
func printFiles(w io.Writer, files []checkpoint.Change) {
	for _, f := range files {
		if f.Status == "R" {
			fmt.Fprintf(w, "R %s -> %s\n", f.OldPath, f.Path)
			continue
		}
		fmt.Fprintf(w, "%s %s\n", f.Status, f.Path)
	}
}

// hasGit reports whether git is on this machine's PATH. Checkpoints are
// on by default, but acprun runs an agent without git too (the README's
// demo needs nothing beyond Go): where git is missing, turns are simply
// not recorded, rather than reported as failing one by one. On an SSH
// host the session reports a missing git itself.
func hasGit() bool {
	_, err := exec.LookPath("git")
	return err == nil
}
