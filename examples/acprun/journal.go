package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/bridge"
	"github.com/acphost/acphost/journal"
)

// openJournal opens the journal --journal names, or the default one in
// $XDG_DATA_HOME/acphost: for writing for a turn, read-only for sessions
// and history, which then work beside a running acprun.
func openJournal(ctx context.Context, o *options, readOnly bool) (*journal.DB, error) {
	path := o.journal
	if path == "" {
		p, err := journal.DefaultPath()
		if err != nil {
			return nil, fail(exitUsage, "no journal: %v (choose one with --journal FILE)", err)
		}
		path = p
	}
	db, err := journal.Open(ctx, path, journalOptions(readOnly))
	switch {
	case errors.Is(err, journal.ErrInUse):
		// The error names the program holding it (acprun, the web UI, …).
		return nil, fail(exitFailed, "%v; give this run its own with --journal FILE", err)
	case readOnly && errors.Is(err, fs.ErrNotExist):
		return nil, errNoJournalYet
	case err != nil:
		return nil, fail(exitFailed, "opening the journal: %v", err)
	}
	return db, nil
}

// journalCommitDelay is how long acprun lets journaled events wait to be
// committed together (journal.Options.CommitDelay): a flood commits some
// twenty times a second instead of once per batch the Host takes. The
// journal is acprun's history, read by its next runs; a kill of acprun
// loses at most this much of the turn it interrupts, and a turn's end is
// committed at once.
const journalCommitDelay = 50 * time.Millisecond

// journalOptions are the options acprun opens its journal with.
func journalOptions(readOnly bool) *journal.Options {
	if readOnly {
		return &journal.Options{ReadOnly: true}
	}
	return &journal.Options{CommitDelay: journalCommitDelay}
}

// errNoJournalYet: the journal to read has not been written yet.
var errNoJournalYet = errors.New("no journal yet")

// findSession finds the journaled session arg names: by its host key, or
// else by a native session id exactly one session had (bridge.FindSession:
// an id several had is refused, naming their keys). found is false when
// the journal has no such session.
func findSession(ctx context.Context, db *journal.DB, arg string) (rec bridge.Record, found bool, err error) {
	rec, err = bridge.FindSession(ctx, db, arg)
	switch {
	case errors.Is(err, bridge.ErrUnknownSession):
		return bridge.Record{}, false, nil
	case err != nil:
		return bridge.Record{}, false, err
	}
	return rec, true, nil
}

// runSessions prints the journal's sessions, most recent first: one line
// each, with the key whole, so it can be pasted into --resume and history.
func runSessions(o *options, w io.Writer) error {
	ctx := context.Background()
	db, err := openJournal(ctx, o, true)
	if errors.Is(err, errNoJournalYet) {
		fmt.Fprintln(w, "no sessions yet")
		return nil
	}
	if err != nil {
		return err
	}
	defer db.Close()
	recs, err := db.Sessions(ctx)
	if err != nil {
		return fail(exitFailed, "listing sessions: %v", err)
	}
	if o.events {
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		for _, r := range recs {
			_ = enc.Encode(r) // a Record always encodes
		}
		return nil
	}
	if len(recs) == 0 {
		fmt.Fprintln(w, "no sessions yet")
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY\tAGENT\tUPDATED\tTURNS\tTITLE / WORKSPACE")
	for _, r := range recs {
		agent := r.Provider
		if agent == "" {
			agent = r.Bridge
		}
		label := r.Title
		if label == "" {
			label = r.Cwd
		}
		if r.Fork != nil {
			label = fmt.Sprintf("(fork of %s after turn %d) %s", r.Fork.Parent, r.Fork.AfterTurn, label)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\n", shellWord(r.Key), oneLine(agent), when(r.UpdatedAt), r.Turns, oneLine(label))
	}
	return tw.Flush()
}

// when formats a record time for the sessions table.
func when(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.Local().Format("2006-01-02 15:04")
}

// runHistory prints one journaled session: as a transcript, or with
// --events as the JSON lines --events printed live. A fork's starts with
// the history it inherited (bridge.History).
func runHistory(o *options, w, diag io.Writer, colors palette) error {
	if len(o.args) != 1 {
		return fail(exitUsage, "usage: acprun history SESSION (a key from acprun sessions)")
	}
	ctx := context.Background()
	db, err := openJournal(ctx, o, true)
	if errors.Is(err, errNoJournalYet) {
		return fail(exitUsage, "no session %q: the journal is empty (see acprun sessions)", o.args[0])
	}
	if err != nil {
		return err
	}
	defer db.Close()
	rec, found, err := findSession(ctx, db, o.args[0])
	if errors.Is(err, bridge.ErrAmbiguousSession) {
		return fail(exitUsage, "%v", err)
	}
	if err != nil {
		return fail(exitFailed, "reading the journal: %v", err)
	}
	if !found {
		return fail(exitUsage, "no session %q in the journal (see acprun sessions)", o.args[0])
	}
	var out output
	if o.events {
		out = newJSONOutput(w)
	} else {
		out = newHistory(w, diag, colors)
	}
	// A fork's history is its parent's up to the fork, then its own.
	for ev, err := range bridge.History(ctx, db, rec.Key) {
		if err != nil {
			return fail(exitFailed, "reading the journal: %v", err)
		}
		out.event(ev)
	}
	out.finish()
	return nil
}

// resumeTarget resolves --resume against the journal: the host key to
// open the session under, the native id the agent may load and the
// directory the session was recorded in. An argument the journal does not
// know is taken as a native session id of the agent.
func resumeTarget(ctx context.Context, db *journal.DB, arg string) (key, native, cwd string, err error) {
	rec, found, err := findSession(ctx, db, arg)
	if errors.Is(err, bridge.ErrAmbiguousSession) {
		return "", "", "", err
	}
	if err != nil {
		return "", "", "", fmt.Errorf("reading the journal: %w", err)
	}
	if !found {
		return "", arg, "", nil
	}
	return rec.Key, rec.NativeSessionID, rec.Cwd, nil
}

// resumeHint is the line acprun prints after a turn: how to continue the
// session when the agent can load or resume sessions, else how to see it.
func resumeHint(key string, resumable bool) string {
	if !resumable {
		return "session " + shellWord(key) + " (the agent cannot resume sessions; acprun history " + shellWord(key) + " shows it)"
	}
	return "session " + shellWord(key) + " (continue it with --resume " + shellWord(key) + ")"
}

// agentCanResume reports whether the agent acprun started can resume
// sessions (see canResume), asked while it runs.
func agentCanResume(host *bridge.Host) bool {
	for _, b := range host.Bridges() {
		if canResume(b.InitializeResponse()) {
			return true
		}
	}
	return false
}

// canResume reports whether the agent that answered init can load or
// resume a session (loadSession, sessionCapabilities.resume), which
// --resume needs to continue it rather than start a new one.
func canResume(init *acpclient.InitializeResponse) bool {
	if init == nil {
		return false
	}
	caps := init.AgentCapabilities
	return caps.LoadSession || caps.SessionCapabilities.Resume != nil
}

// shellWord is s as one word a shell reads back as s: itself when it is
// made of safe characters (as the keys acprun makes are), else single-quoted,
// with control characters (which a terminal would act on) escaped Go-style
// inside $'…' quoting so nothing reaches the terminal raw.
func shellWord(s string) string {
	safe := s != ""
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_.:/@+=", r)) {
			safe = false
			break
		}
	}
	switch {
	case safe:
		return s
	case strings.IndexFunc(s, unicode.IsControl) < 0:
		return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
	}
	q := strconv.Quote(s)
	return "$'" + strings.ReplaceAll(q[1:len(q)-1], "'", `\'`) + "'"
}

// resolveResume turns --resume into the session to reopen (o.resumeKey,
// o.resume) and its recorded cwd; a reference that names several sessions
// is a usage error.
func resolveResume(ctx context.Context, o *options, db *journal.DB) error {
	if o.resume == "" {
		return nil
	}
	key, native, cwd, err := resumeTarget(ctx, db, o.resume)
	if err != nil {
		if errors.Is(err, bridge.ErrAmbiguousSession) {
			return fail(exitUsage, "--resume: %v", err)
		}
		return fail(exitFailed, "--resume: %v", err)
	}
	o.resumeKey, o.resume = key, native
	return resumeCwd(o, cwd)
}
