package journal

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// dirEntries lists the names in dir, sorted.
func dirEntries(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// Another program's SQLite database is refused untouched: not a byte of
// it changes, no table is added and nothing is left beside it.
func TestOpenRefusesForeignDatabase(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "notes.db")
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT); INSERT INTO notes (body) VALUES ('keep me')"); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	db, err := Open(context.Background(), path, nil)
	if err == nil {
		db.Close()
		t.Fatal("Open accepted another program's database")
	}
	if !errors.Is(err, ErrNotJournal) || !strings.Contains(err.Error(), path) {
		t.Errorf("Open error %q: want ErrNotJournal naming the file", err)
	}
	after, _ := os.ReadFile(path)
	if !bytes.Equal(before, after) {
		t.Error("Open changed the foreign database")
	}
	if got := dirEntries(t, dir); !slices.Equal(got, []string{"notes.db"}) {
		t.Errorf("the directory holds %v after the refused open, want only notes.db", got)
	}
	if db, err := Open(context.Background(), path, &Options{ReadOnly: true}); !errors.Is(err, ErrNotJournal) {
		if db != nil {
			db.Close()
		}
		t.Errorf("a read-only Open of another program's database: %v, want ErrNotJournal", err)
	}
	// A database marked by another program is refused too, even empty.
	marked := filepath.Join(dir, "marked.db")
	raw, _ = sql.Open("sqlite", marked)
	if _, err := raw.Exec("PRAGMA application_id = 42"); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	if db, err := Open(context.Background(), marked, nil); !errors.Is(err, ErrNotJournal) {
		if db != nil {
			db.Close()
		}
		t.Errorf("Open of a database marked by another program: %v, want ErrNotJournal", err)
	}
}

// A file that is not SQLite is refused clearly and leaves no FILE.lock.
func TestOpenNonDatabaseLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "notes.txt")
	content := []byte(strings.Repeat("not a database\n", 100))
	if err := os.WriteFile(path, content, 0o600); err != nil {
		t.Fatal(err)
	}
	db, err := Open(context.Background(), path, nil)
	if err == nil {
		db.Close()
		t.Fatal("Open accepted a file that is not SQLite")
	}
	if !errors.Is(err, ErrNotJournal) || !strings.Contains(err.Error(), "not a SQLite database") {
		t.Errorf("Open error %q: want ErrNotJournal saying it is not SQLite", err)
	}
	if got := dirEntries(t, dir); !slices.Equal(got, []string{"notes.txt"}) {
		t.Errorf("the directory holds %v after the refused open, want only notes.txt", got)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(after, content) {
		t.Error("Open changed the file")
	}
}

// An Open that fails after creating the journal removes what it created:
// the file, its lock and the directories it made.
func TestFailedOpenRemovesWhatItCreated(t *testing.T) {
	saved := migrations
	defer func() { migrations = saved }()
	migrations = append(slices.Clone(saved), func(context.Context, *sql.Tx) error { return errors.New("step fails") })
	top := t.TempDir()
	path := filepath.Join(top, "new", "dir", "journal.db")
	db, err := Open(context.Background(), path, nil)
	if err == nil {
		db.Close()
		t.Fatal("Open succeeded with a failing migration")
	}
	if got := dirEntries(t, top); len(got) != 0 {
		t.Errorf("a failed open left %v in %s", got, top)
	}
}

// Journals written before the marker existed, and empty SQLite files, are
// opened; the journal is marked on the way.
func TestOpenAcceptsUnmarkedJournalAndEmptyDatabase(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	old := filepath.Join(dir, "old.db")
	db, err := Open(ctx, old, nil)
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, db, textEvent(1, "k1", 1))
	db.Close()
	raw, _ := sql.Open("sqlite", old)
	if _, err := raw.Exec("PRAGMA application_id = 0"); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	db, err = Open(ctx, old, nil)
	if err != nil {
		t.Fatalf("Open of a journal from before the marker: %v", err)
	}
	var app int
	if err := db.write.QueryRowContext(ctx, "PRAGMA application_id").Scan(&app); err != nil || app != applicationID {
		t.Errorf("application_id %#x, %v; want %#x", app, err, applicationID)
	}
	db.Close()

	empty := filepath.Join(dir, "empty.db")
	raw, _ = sql.Open("sqlite", empty)
	if _, err := raw.Exec("PRAGMA page_size = 4096; VACUUM"); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	if fi, err := os.Stat(empty); err != nil || fi.Size() == 0 {
		t.Fatalf("the empty database was not written: %v", err)
	}
	db, err = Open(ctx, empty, nil)
	if err != nil {
		t.Fatalf("Open of an empty SQLite database: %v", err)
	}
	var pageBytes int // an existing file keeps its page size
	if err := db.write.QueryRowContext(ctx, "PRAGMA page_size").Scan(&pageBytes); err != nil || pageBytes != 4096 {
		t.Errorf("page_size of the existing file %d, %v; want 4096", pageBytes, err)
	}
	db.Close()
}

// A second writer is told which program holds the journal, with its pid,
// and how to choose another file.
func TestInUseNamesTheHolder(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "j.db")
	first, err := Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	second, err := Open(ctx, path, nil)
	if err == nil {
		second.Close()
		t.Fatal("a second writer opened the journal")
	}
	exe, _ := os.Executable()
	want := fmt.Sprintf("%q (pid %s)", filepath.Base(exe), strconv.Itoa(os.Getpid()))
	if !errors.Is(err, ErrInUse) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "another journal file") {
		t.Errorf("second writer: %q; want ErrInUse naming %s and saying to open another file", err, want)
	}
}
