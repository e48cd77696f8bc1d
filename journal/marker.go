package journal

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
)

// ErrNotJournal reports a file that is not a journal: not SQLite at all,
// or another program's SQLite database. Open refuses it untouched.
var ErrNotJournal = errors.New("not a journal of this package")

// applicationID is the journal's schema marker, PRAGMA application_id
// ("acph"): it tells a journal from another program's SQLite database.
// Files written before the marker existed are recognised by their schema
// version and tables, and are marked when first opened for writing.
const applicationID = 0x61637068

// sqliteHeader starts every SQLite database file.
var sqliteHeader = []byte("SQLite format 3\x00")

// checkExisting refuses, before anything is created, locked or changed, a
// file at path that is not a journal: one that is not empty and not
// SQLite, or a database without the marker that already holds tables
// other than a journal's. exists is false when there is no file yet.
func checkExisting(ctx context.Context, path string) (exists bool, err error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("journal: opening %s: %w", path, err)
	}
	head := make([]byte, len(sqliteHeader))
	n, rerr := io.ReadFull(f, head)
	f.Close()
	switch {
	case n == 0 && (rerr == io.EOF || rerr == nil):
		return true, nil // an empty file: a new journal
	case rerr != nil && rerr != io.ErrUnexpectedEOF:
		return true, fmt.Errorf("journal: reading %s: %w", path, rerr)
	case !bytes.Equal(head[:n], sqliteHeader):
		return true, fmt.Errorf("journal: %s: not a SQLite database, left untouched: %w", path, ErrNotJournal)
	}
	// Read-only and without a journal_mode, so the check changes nothing.
	raw, err := sql.Open("sqlite", dsn(path, false)+"&mode=ro")
	if err != nil {
		return true, fmt.Errorf("journal: opening %s: %w", path, err)
	}
	defer raw.Close()
	if err := checkMarker(ctx, raw); err != nil {
		return true, fmt.Errorf("journal: %s: %w", path, err)
	}
	return true, nil
}

// checkMarker accepts a journal (marked, or written before the marker
// with our schema version and tables) or an empty database.
func checkMarker(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}) error {
	var app, version, tables, ours int
	err := q.QueryRowContext(ctx, `SELECT (SELECT application_id FROM pragma_application_id),
		(SELECT user_version FROM pragma_user_version),
		(SELECT count(*) FROM sqlite_schema WHERE type = 'table'),
		(SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name IN ('sessions', 'native_sessions', 'events', 'meta'))`).
		Scan(&app, &version, &tables, &ours)
	if err != nil {
		return fmt.Errorf("reading the schema marker: %w", err)
	}
	switch {
	case app == applicationID:
		return nil
	case app != 0:
		return fmt.Errorf("a database of another program (application_id %#x), left untouched: %w", app, ErrNotJournal)
	case tables == 0 && version == 0:
		return nil // a new database
	case version >= 1 && ours == 4:
		return nil // a journal from before the marker
	}
	return fmt.Errorf("another program's SQLite database (%d tables and no journal marker), left untouched: %w", tables, ErrNotJournal)
}
