package journal

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
)

// ErrSchemaTooNew reports a journal file written by a newer version of
// this package: its schema version (PRAGMA user_version) is one this
// version does not know, so it refuses the file rather than misread it.
var ErrSchemaTooNew = errors.New("journal schema is newer than this version of the journal package")

// A migration brings the schema from one version to the next, inside the
// transaction that also records the new version.
type migration func(ctx context.Context, tx *sql.Tx) error

// migrations[i] migrates version i to version i+1; the schema version of
// this package is len(migrations). A new version appends a step, never
// edits one: files in the field are at every version.
var migrations = []migration{createV1, addSessionState, addForkOrigin, addQueue, addWorktree}

// migrate runs the steps a file still needs, all in one transaction, so a
// crash during a migration leaves the file at its old version.
func migrate(ctx context.Context, db *sql.DB, steps []migration, log *slog.Logger) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("reading the schema version: %w", err)
	}
	defer tx.Rollback()
	// Checked again under the write lock: nothing changes a file that is
	// not a journal.
	if err := checkMarker(ctx, tx); err != nil {
		return err
	}
	var version, app int
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return fmt.Errorf("reading the schema version: %w", err)
	}
	if version > len(steps) {
		return fmt.Errorf("schema version %d, this package knows up to %d: %w", version, len(steps), ErrSchemaTooNew)
	}
	if err := tx.QueryRowContext(ctx, "PRAGMA application_id").Scan(&app); err != nil {
		return fmt.Errorf("reading the schema marker: %w", err)
	}
	if version == len(steps) && app == applicationID {
		return nil
	}
	if app != applicationID {
		// PRAGMA takes no bound parameters; the value is our own integer.
		if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA application_id = %d", applicationID)); err != nil {
			return fmt.Errorf("marking the file as a journal: %w", err)
		}
	}
	for v := version; v < len(steps); v++ {
		if err := steps[v](ctx, tx); err != nil {
			return fmt.Errorf("migrating the schema from version %d to %d: %w", v, v+1, err)
		}
	}
	// PRAGMA takes no bound parameters; the value is our own integer.
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", len(steps))); err != nil {
		return fmt.Errorf("recording the schema version: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("committing the schema migration: %w", err)
	}
	if version != len(steps) {
		log.Info("journal schema migrated", "from", version, "to", len(steps))
	}
	return nil
}

// schemaV1 is the first schema; doc.go describes every column.
const schemaV1 = `
CREATE TABLE sessions (
	key             TEXT PRIMARY KEY,
	bridge          TEXT NOT NULL DEFAULT '',
	provider        TEXT NOT NULL DEFAULT '',
	native_id       TEXT NOT NULL DEFAULT '',
	cwd             TEXT NOT NULL DEFAULT '',
	model           TEXT NOT NULL DEFAULT '',
	effort          TEXT NOT NULL DEFAULT '',
	mode            TEXT NOT NULL DEFAULT '',
	read_only       INTEGER NOT NULL DEFAULT 0,
	approval_policy TEXT NOT NULL DEFAULT '',
	agent_mode      TEXT NOT NULL DEFAULT '',
	grants          TEXT NOT NULL DEFAULT '[]',
	title           TEXT NOT NULL DEFAULT '',
	turns           INTEGER NOT NULL DEFAULT 0,
	created_at      TEXT,
	updated_at      TEXT,
	last_seq        INTEGER NOT NULL DEFAULT 0,
	last_pos        INTEGER NOT NULL DEFAULT 0
) STRICT;

CREATE TABLE native_sessions (
	key       TEXT NOT NULL REFERENCES sessions(key) ON DELETE CASCADE,
	ordinal   INTEGER NOT NULL,
	native_id TEXT NOT NULL,
	reason    TEXT NOT NULL DEFAULT '',
	since     TEXT,
	PRIMARY KEY (key, ordinal)
) STRICT;

CREATE TABLE events (
	pos     INTEGER PRIMARY KEY,
	key     TEXT NOT NULL,
	bridge  TEXT NOT NULL,
	session TEXT NOT NULL,
	seq     INTEGER NOT NULL,
	turn    INTEGER NOT NULL,
	kind    TEXT NOT NULL,
	time    TEXT,
	replay  INTEGER NOT NULL,
	late    INTEGER NOT NULL,
	event   TEXT NOT NULL
) STRICT;
CREATE INDEX events_by_key ON events (key, pos);
CREATE INDEX events_by_bridge ON events (bridge, pos);

CREATE TABLE meta (
	name  TEXT PRIMARY KEY,
	value INTEGER NOT NULL
) STRICT;
INSERT INTO meta (name, value) VALUES ('last_pos', 0);
`

func createV1(ctx context.Context, tx *sql.Tx) error {
	_, err := tx.ExecContext(ctx, schemaV1)
	return err
}

// addSessionState (version 2) keeps the agent's session mode and config
// option values, which a resumed session is set back to.
func addSessionState(ctx context.Context, tx *sql.Tx) error {
	_, err := tx.ExecContext(ctx, `
ALTER TABLE sessions ADD COLUMN session_mode TEXT NOT NULL DEFAULT '';
ALTER TABLE sessions ADD COLUMN config_values TEXT NOT NULL DEFAULT '{}';`)
	return err
}

// addForkOrigin (version 3) links a forked session to the session it was
// forked from (bridge.ForkOrigin); a session that is no fork keeps the
// empty parent.
func addForkOrigin(ctx context.Context, tx *sql.Tx) error {
	_, err := tx.ExecContext(ctx, `
ALTER TABLE sessions ADD COLUMN fork_parent TEXT NOT NULL DEFAULT '';
ALTER TABLE sessions ADD COLUMN fork_parent_session TEXT NOT NULL DEFAULT '';
ALTER TABLE sessions ADD COLUMN fork_after_turn INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN fork_transcript INTEGER NOT NULL DEFAULT 0;`)
	return err
}

// addQueue (version 4) keeps the session's prompt queue, which a resumed
// session has back.
func addQueue(ctx context.Context, tx *sql.Tx) error {
	_, err := tx.ExecContext(ctx, `ALTER TABLE sessions ADD COLUMN queue TEXT NOT NULL DEFAULT '[]';`)
	return err
}

// addWorktree (version 5) keeps the git worktree a session owns
// (bridge.Worktree), which a resumed session works in and a delete
// removes.
func addWorktree(ctx context.Context, tx *sql.Tx) error {
	_, err := tx.ExecContext(ctx, `ALTER TABLE sessions ADD COLUMN worktree TEXT NOT NULL DEFAULT '';`)
	return err
}
