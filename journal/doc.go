// Package journal keeps a Host's events and session records in one SQLite
// file, so that what an app shows survives the app: a browser tab that
// connects late replays history, a restarted app lists its sessions and
// resumes them, and every decision made on the user's behalf stays on
// record. It implements bridge.Journal, and bridge.Store so that resume
// records live beside the events instead of in a FileStore. The database
// is modernc.org/sqlite, pure Go: apps still cross-compile without cgo.
//
// # Use
//
// One file per app, opened once, handed to the Host:
//
//	path, err := journal.DefaultPath() // $XDG_DATA_HOME/acphost/journal.db
//	...
//	db, err := journal.Open(ctx, path, nil)
//	...
//	defer db.Close()
//	host := bridge.NewHost(&bridge.HostOptions{Journal: db})
//
// The Host numbers every event, appends it in batches from one goroutine
// off the agents' path (one transaction per batch), and continues its
// numbering after LastPos and LastSeq when it starts on a journal that
// already has events. Subscribers that fall behind the Host's in-memory
// tail read from ReadEvents. Only one writer may use a file at a time, since
// two Hosts would number events alike: Open takes an exclusive lock on a
// file beside it (FILE.lock, an flock on Unix) and fails with ErrInUse
// while another holds it; the holder writes its pid and program name into
// FILE.lock, and the error names them, so the user can close that program
// or give this one another file. Two programs (say acprun and a web UI)
// therefore cannot write one journal at once: each writer numbers events
// in memory, ahead of its commits, and its subscribers are served from
// that memory. Readers do not need the lock: Options.ReadOnly
// opens the journal for listing and showing sessions while a Host writes
// it, and other programs (the sqlite3 shell) may read it too.
//
// # Numbering
//
// Pos is an event's position among all the events of the Host: 1 for the
// first event ever journaled, +1 for each event of any agent or session,
// across restarts. It is the events table's primary key and the cursor
// subscribers resume after; it is never reused, even once DeleteSession
// removed the latest events (meta.last_pos keeps the high-water mark).
//
// Seq numbers the events of one session key from 1 without gaps, across
// changes of the agent's native session id and across restarts. Events
// outside any session (Key "": an agent exited, agent-wide notices) are
// numbered per bridge.
//
// # Crash guarantees
//
// The file is in WAL mode with synchronous=NORMAL. By default an Append is
// one transaction, committed before it returns: after a crash the batch is
// there whole or not at all, and a Host, which delivers a batch only once
// Append returned, never shows an event that a crash could take back. A
// process that is killed (SIGKILL, a panic, an OOM kill) loses nothing
// that was committed: the next Open recovers the write-ahead log. A power
// loss or an operating-system crash may lose the last transactions
// (those since the last checkpoint), never the file's integrity. The
// package's crash tests kill a real process in the middle of a flood of
// appends and check PRAGMA integrity_check and the absence of gaps.
//
// Options.CommitDelay trades a little of that for speed: the batches of
// Appends that follow each other within the delay share one transaction,
// so a Host may deliver an event up to the delay before it is committed.
// What a kill may lose is then the events of the last delay at most: the
// journal still ends on a whole batch, with no gap before it, and a
// turn's end is committed, with everything before it, before its Append
// returns. Readers of the same DB always see every appended event (a read
// commits what waits first); other processes see it once committed.
// Close and Flush commit what waits. acprun, whose journal is its
// history rather than a live record other programs rely on, uses a delay.
//
// # Schema
//
// The schema version is PRAGMA user_version (now 5). Open migrates an
// older file in one transaction and refuses a newer one (ErrSchemaTooNew).
// PRAGMA application_id marks the file as a journal (0x61637068, "acph").
// Open refuses, with ErrNotJournal and without changing or creating
// anything, a file that is not SQLite and a database that is not marked
// and already holds tables other than a journal's (another program's);
// an empty file or database becomes a journal. An Open that fails removes
// the files and directories it created.
// Times are text, RFC 3339 in UTC with nine digits of fraction
// ("2026-12-01T09:00:00.123456789Z"): fixed width, so they sort as text;
// NULL when unknown. Booleans are 0 or 1. Every table is STRICT.
//
// Table sessions, one row per session key: the record SaveSession stores,
// and the columns Append maintains.
//
//	key              TEXT PRIMARY KEY  the host's session key (Event.Key, Record.Key)
//	bridge           TEXT  the id of the bridge that ran it (Record.Bridge)
//	provider         TEXT  the provider or profile name (Record.Provider)
//	native_id        TEXT  the agent's current session id (Record.NativeSessionID)
//	cwd              TEXT  the session's working directory
//	model            TEXT  the model asked for at launch
//	effort           TEXT  the reasoning effort asked for
//	mode             TEXT  the policy's permission mode
//	read_only        INTEGER  the policy's read-only flag
//	approval_policy  TEXT  the agent's native approval policy, when it has one
//	agent_mode       TEXT  the agent mode of a profile launch
//	grants           TEXT  JSON array of the extra directories granted (Record.ExternalDirectories)
//	title            TEXT  the title: the agent's latest (session_info) or the record's
//	turns            INTEGER  how many turns the session ran (Record.Turns)
//	created_at       TEXT  when the session was first recorded
//	updated_at       TEXT  the latest event's time or record save, whichever is later
//	last_seq         INTEGER  the highest Seq journaled for the key
//	last_pos         INTEGER  the Pos of the key's latest event
//	session_mode     TEXT  the agent's session mode (Record.SessionMode)
//	config_values    TEXT  JSON object of config option id to current value (Record.ConfigValues)
//	fork_parent      TEXT  the key of the session it was forked from, '' for none (Record.Fork)
//	fork_parent_session  TEXT  the parent's native id the agent forked
//	fork_after_turn  INTEGER  the parent's turn the fork branched after
//	fork_transcript  INTEGER  the fork is a new session seeded with a transcript (ForkOrigin.Transcript)
//	queue            TEXT  JSON array of the prompts queued (Record.Queue)
//	worktree         TEXT  JSON object of the git worktree the session owns, '' for none (Record.Worktree)
//
// Append creates a row for a key it has not seen (key, bridge, native_id,
// created_at) and keeps updated_at, last_seq, last_pos and title current.
// SaveSession replaces the record's columns but keeps last_seq and
// last_pos, and keeps bridge, native_id, title and created_at when the
// record leaves them empty.
//
// Table native_sessions, the native session ids a key was attached to,
// oldest first (Record.NativeHistory), replaced by every SaveSession:
//
//	key        TEXT  the session key (references sessions; deleted with it)
//	ordinal    INTEGER  1 for the first id, 2 for the next…; (key, ordinal) is the primary key
//	native_id  TEXT  the agent's session id
//	reason     TEXT  why it replaced the one before ("" for the first)
//	since      TEXT  when the key was attached to it
//
// Table events, every journaled event. The event column is the whole
// event in its JSON form (the one bridge.Event marshals to); the other
// columns repeat the fields a reader filters on. Indices events_by_key
// (key, pos) and events_by_bridge (bridge, pos) serve reading a session or
// a bridge in order.
//
//	pos      INTEGER PRIMARY KEY  Event.Pos
//	key      TEXT  Event.Key ("" for agent-wide events)
//	bridge   TEXT  Event.Bridge
//	session  TEXT  Event.Session, the native session id at the time
//	seq      INTEGER  Event.Seq
//	turn     INTEGER  Event.Turn (0 outside a turn)
//	kind     TEXT  Event.Kind ("text", "tool_start", "decision", …)
//	time     TEXT  Event.Time
//	replay   INTEGER  Event.Replay: replayed by session/load
//	late     INTEGER  Event.Late: arrived after its turn
//	event    TEXT  the event as JSON
//
// Table meta, the journal's own counters, as (name TEXT PRIMARY KEY,
// value INTEGER): 'last_pos' is the highest Pos ever appended.
//
// For example, the text of a session's latest turn, from the shell:
//
//	sqlite3 ~/.local/share/acphost/journal.db \
//	  "SELECT group_concat(event->>'text', '') FROM events
//	   WHERE key = '…' AND kind = 'text'
//	     AND turn = (SELECT max(turn) FROM events WHERE key = '…')"
//
// # Connections
//
// SQLite admits one writer at a time. The DB writes through a single
// connection whose transactions begin IMMEDIATE, so writers (the Host's
// Append, SaveSession, DeleteSession) queue in Go rather than fail with
// SQLITE_BUSY, and reads run on a separate pool of query-only connections:
// in WAL mode they see the last committed state while a batch is written,
// and never wait for it.
package journal
