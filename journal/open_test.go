package journal

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/acphost/acphost/bridge"
)

func TestOpenCreatesPrivateFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data", "acphost")
	path := filepath.Join(dir, "journal.db")
	db := openAt(t, path)
	mustAppend(t, db, textEvent(1, "k1", 1)) // makes the -wal file
	for _, c := range []struct {
		path string
		mode os.FileMode
	}{{dir, 0o700 | os.ModeDir}, {path, 0o600}, {path + "-wal", 0o600}, {path + "-shm", 0o600}} {
		fi, err := os.Stat(c.path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode() != c.mode {
			t.Errorf("%s has mode %v, want %v", c.path, fi.Mode(), c.mode)
		}
	}
	if db.Path() != path {
		t.Errorf("Path() = %q, want %q", db.Path(), path)
	}
}

func TestOpenSetsPragmas(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	for _, c := range []struct {
		pool   *sql.DB
		pragma string
		want   string
	}{
		{db.write, "journal_mode", "wal"},
		{db.write, "foreign_keys", "1"},
		{db.write, "synchronous", "1"}, // NORMAL
		{db.write, "busy_timeout", "5000"},
		{db.write, "cache_size", strconv.Itoa(-writerCacheKiB)},
		{db.write, "page_size", strconv.Itoa(pageSize)}, // a new file's
		{db.write, "wal_autocheckpoint", strconv.Itoa(walCheckpointPages)},
		{db.write, "user_version", strconv.Itoa(len(migrations))},
		{db.read, "journal_mode", "wal"},
		{db.read, "synchronous", "1"},
		{db.read, "busy_timeout", "5000"},
		{db.read, "query_only", "1"},
		{db.read, "cache_size", "-2000"}, // readers keep SQLite's default
	} {
		var got string
		if err := c.pool.QueryRowContext(ctx, "PRAGMA "+c.pragma).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("PRAGMA %s = %q, want %q", c.pragma, got, c.want)
		}
	}
}

// setUserVersion writes the schema version of a closed journal file.
func setUserVersion(t *testing.T, path string, v int) {
	t.Helper()
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.Exec("PRAGMA user_version = " + strconv.Itoa(v)); err != nil {
		t.Fatal(err)
	}
}

func TestOpenRefusesNewerSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal.db")
	db, err := Open(context.Background(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	setUserVersion(t, path, len(migrations)+1)
	db, err = Open(context.Background(), path, nil)
	if err == nil {
		db.Close()
		t.Fatal("Open accepted a newer schema")
	}
	if !errors.Is(err, ErrSchemaTooNew) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), fmt.Sprintf("version %d", len(migrations)+1)) {
		t.Fatalf("Open error %q: want ErrSchemaTooNew naming the file and its version", err)
	}
}

func TestOpenRefusesNonDatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal.db")
	if err := os.WriteFile(path, []byte(strings.Repeat("not a database\n", 100)), 0o600); err != nil {
		t.Fatal(err)
	}
	if db, err := Open(context.Background(), path, nil); err == nil {
		db.Close()
		t.Fatal("Open accepted a file that is not SQLite")
	}
}

func TestMigrateRunsOnlyMissingSteps(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal.db")
	ctx := context.Background()
	db := openAt(t, path)
	mustAppend(t, db, textEvent(1, "k1", 1))
	var ran []int
	step := func(n int) migration {
		return func(ctx context.Context, tx *sql.Tx) error {
			ran = append(ran, n)
			_, err := tx.ExecContext(ctx, "ALTER TABLE sessions ADD COLUMN extra"+strconv.Itoa(n)+" TEXT")
			return err
		}
	}
	var logged strings.Builder
	log := slog.New(slog.NewTextHandler(&logged, nil))
	n := len(migrations)
	steps := append(append([]migration{}, migrations...), step(n+1), step(n+2))
	if err := migrate(ctx, db.write, steps, log); err != nil {
		t.Fatal(err)
	}
	if len(ran) != 2 || ran[0] != n+1 || ran[1] != n+2 {
		t.Fatalf("ran steps %v, want [%d %d]", ran, n+1, n+2)
	}
	var version int
	if err := db.write.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil || version != n+2 {
		t.Fatalf("user_version %d, %v; want %d", version, err, n+2)
	}
	if !strings.Contains(logged.String(), fmt.Sprintf("from=%d to=%d", n, n+2)) {
		t.Errorf("log %q does not say what migrated", logged.String())
	}
	if got := mustRead(t, db, bridge.EventQuery{}); len(got) != 1 {
		t.Fatalf("the migration lost events: %d", len(got))
	}
	// A failing step leaves the file at its version.
	failing := append(steps, func(context.Context, *sql.Tx) error { return errors.New("boom") })
	if err := migrate(ctx, db.write, failing, log); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("version %d to %d", n+2, n+3)) {
		t.Fatalf("failing migration: %v", err)
	}
	if err := db.write.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil || version != n+2 {
		t.Fatalf("after a failed step user_version %d, %v; want %d", version, err, n+2)
	}
}

func TestDefaultPath(t *testing.T) {
	for _, c := range []struct {
		name, xdg, home, want string
	}{
		{"xdg", "/x/data", "/home/u", "/x/data/acphost/journal.db"},
		{"home", "", "/home/u", "/home/u/.local/share/acphost/journal.db"},
		{"relative xdg is ignored", "rel", "/home/u", "/home/u/.local/share/acphost/journal.db"},
		{"neither", "", "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("XDG_DATA_HOME", c.xdg)
			t.Setenv("HOME", c.home)
			got, err := DefaultPath()
			if c.want == "" {
				if err == nil {
					t.Fatalf("DefaultPath() = %q without HOME or XDG_DATA_HOME", got)
				}
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("DefaultPath() = %q, %v; want %q", got, err, c.want)
			}
		})
	}
}

// A journal of schema version 1 is migrated on open, keeping its records,
// which then hold the session mode and config values too.
func TestOpenMigratesVersion1(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "journal.db")
	saved := migrations
	migrations = saved[:1]
	db, err := Open(ctx, path, nil)
	migrations = saved
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.write.ExecContext(ctx, "INSERT INTO sessions (key, cwd) VALUES ('k1', '/w')"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	db = openAt(t, path)
	rec := mustLoad(t, db, "k1")
	if rec.Cwd != "/w" || rec.SessionMode != "" || rec.ConfigValues != nil {
		t.Fatalf("the migrated record %+v", rec)
	}
	rec.SessionMode, rec.ConfigValues = "dontAsk", map[string]string{"verbosity": "high"}
	mustSave(t, db, "k1", rec)
	if got := mustLoad(t, db, "k1"); got.SessionMode != "dontAsk" || got.ConfigValues["verbosity"] != "high" {
		t.Fatalf("after saving the session state: %+v", got)
	}
}
