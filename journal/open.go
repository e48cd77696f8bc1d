package journal

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/acphost/acphost/bridge"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver
)

// The DB is both the Host's journal and a session Store.
var (
	_ bridge.Journal = (*DB)(nil)
	_ bridge.Store   = (*DB)(nil)
)

// busyTimeout is how long a statement waits for a lock held by another
// process (say, a tool reading the file) before it fails.
const busyTimeout = 5 * time.Second

// readConns bounds the connections that serve reads: enough for several
// subscribers catching up at once, few enough to keep memory small.
const readConns = 4

// Options configures Open. The zero value (or nil) is ready to use.
type Options struct {
	// Logger receives the journal's rare notes (schema migrations); nil
	// discards them.
	Logger *slog.Logger
	// ReadOnly opens the journal for reading only, for tools that list or
	// show sessions while a Host writes it: no lock is taken, nothing is
	// created or migrated, and every write fails with ErrReadOnly.
	ReadOnly bool
	// CommitDelay lets the events of an Append wait up to this long to be
	// committed in one transaction with those of the Appends that follow,
	// which makes a flood of small batches several times cheaper. Zero
	// commits every Append before it returns. With a delay, what waits is
	// committed when the delay since the first of it has passed, at once
	// when a batch holds a turn's end or 4096 events or 4 MiB of them
	// wait, before any read or other write of this DB (which so always
	// sees every appended event), at Flush and at Close. A process killed
	// in the meantime loses what waited (the last CommitDelay of events
	// while commits succeed), never part of a batch and never an event
	// before a committed one; see "Crash guarantees" in the package doc.
	// A delayed commit that fails is logged and tried again; the next
	// Append, Flush or Close that commits reports the failure. So an event
	// whose Pos is already stored, which fails its batch at once without
	// a delay, fails with one every commit that holds it (a Host, which
	// numbers events after LastPos, never sends one).
	CommitDelay time.Duration
	// Clock times CommitDelay; nil is the real clock. Tests inject a fake.
	Clock bridge.Clock
}

// Errors of Open and of writes.
var (
	// ErrInUse: another process (or another DB in this one) has the
	// journal open for writing. One writer at a time: two Hosts numbering
	// events into one file would collide.
	ErrInUse = errors.New("journal: in use by another writer")
	// ErrReadOnly: a write to a journal opened with Options.ReadOnly.
	ErrReadOnly = errors.New("journal: opened read-only")
)

// DB is an open journal file. It implements bridge.Journal and
// bridge.Store, and is safe for concurrent use.
type DB struct {
	path string
	log  *slog.Logger
	// write has exactly one connection and begins its transactions
	// IMMEDIATE: SQLite allows one writer at a time, so writers queue in
	// database/sql instead of failing with SQLITE_BUSY when a deferred
	// transaction tries to upgrade its lock. read holds several
	// query-only connections which, in WAL mode, read a consistent
	// snapshot while the writer commits.
	write *sql.DB // nil when opened read-only
	read  *sql.DB
	stmts appendStmts
	lock  *os.File // held while open for writing; see lockFile
	// commits holds what waits for a delayed commit; nil without
	// Options.CommitDelay (and when read-only).
	commits *pendingCommits
}

// Open opens the journal at path, creating the file (mode 0600) and its
// directory (0700) when missing, and brings its schema up to date. A file
// written by a newer version of this package is refused with
// ErrSchemaTooNew.
func Open(ctx context.Context, path string, opts *Options) (*DB, error) {
	if opts == nil {
		opts = &Options{}
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("journal: %s: %w", path, err)
	}
	db := &DB{path: abs, log: log}
	if opts.ReadOnly {
		if err := db.openReader(ctx); err != nil {
			db.Close()
			return nil, err
		}
		return db, nil
	}
	// A file that is not a journal is refused before anything is created,
	// locked or changed; what a failed open created is removed again.
	exists, err := checkExisting(ctx, abs)
	if err != nil {
		return nil, err
	}
	var made created
	if err := made.file(abs, exists); err != nil {
		return nil, err
	}
	if db.lock, err = made.lock(abs + ".lock"); err != nil {
		made.undo()
		return nil, err
	}
	if err := db.openPools(ctx); err != nil {
		db.Close()
		made.undo()
		return nil, err
	}
	if opts.CommitDelay > 0 {
		clock := opts.Clock
		if clock == nil {
			clock = bridge.SystemClock()
		}
		db.commits = &pendingCommits{db: db, clock: clock, delay: opts.CommitDelay, log: log}
	}
	return db, nil
}

// openReader opens only the read pool, on a file that must exist and have
// this package's schema.
func (db *DB) openReader(ctx context.Context) error {
	if _, err := os.Stat(db.path); err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	var err error
	// mode=ro: a user who may read the file but not write it can still
	// list and show what it holds.
	if db.read, err = sql.Open("sqlite", dsn(db.path, false)+"&mode=ro"); err != nil {
		return fmt.Errorf("journal: opening %s: %w", db.path, err)
	}
	db.read.SetMaxOpenConns(readConns)
	db.read.SetMaxIdleConns(readConns)
	if err := checkMarker(ctx, db.read); err != nil {
		return fmt.Errorf("journal: %s: %w", db.path, err)
	}
	var version int
	if err := db.read.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return fmt.Errorf("journal: opening %s for reading: %w", db.path, err)
	}
	switch {
	case version > len(migrations):
		return fmt.Errorf("journal: %s: schema version %d, this package knows up to %d: %w", db.path, version, len(migrations), ErrSchemaTooNew)
	case version < len(migrations):
		return fmt.Errorf("journal: %s: schema version %d is older than %d; open it for writing once to migrate it", db.path, version, len(migrations))
	}
	return nil
}

// beginWrite starts a write transaction, or fails on a read-only journal.
func (db *DB) beginWrite(ctx context.Context) (*sql.Tx, error) {
	if db.write == nil {
		return nil, fmt.Errorf("journal: %s: %w", db.path, ErrReadOnly)
	}
	return db.write.BeginTx(ctx, nil)
}

// created lists what Open created, so a failed Open can remove it.
type created struct {
	paths []string // deepest last
}

// file makes the directory and, unless it exists, an empty file with
// private modes, so SQLite (which gives its -wal and -shm files the
// database file's mode) never creates anything readable by others.
func (c *created) file(path string, exists bool) error {
	var missing []string
	for dir := filepath.Dir(path); ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(dir); err == nil || dir == filepath.Dir(dir) {
			break
		}
		missing = append(missing, dir)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("journal: creating the directory of %s: %w", path, err)
	}
	for _, dir := range slices.Backward(missing) {
		c.paths = append(c.paths, dir)
	}
	if exists {
		return nil
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		c.undo()
		return fmt.Errorf("journal: creating %s: %w", path, err)
	}
	c.paths = append(c.paths, path, path+"-wal", path+"-shm", path+"-journal")
	return f.Close()
}

// lock takes the writer's lock beside the journal, noting the lock file
// when this call made it.
func (c *created) lock(path string) (*os.File, error) {
	_, err := os.Lstat(path)
	isNew := errors.Is(err, fs.ErrNotExist)
	f, err := lockFile(path)
	if isNew && (err == nil || !errors.Is(err, ErrInUse)) {
		c.paths = append(c.paths, path)
	}
	return f, err
}

// undo removes what was created, deepest first; a directory that is no
// longer empty stays.
func (c *created) undo() {
	for _, p := range slices.Backward(c.paths) {
		os.Remove(p)
	}
	c.paths = nil
}

func (db *DB) openPools(ctx context.Context) error {
	var err error
	if db.write, err = sql.Open("sqlite", dsn(db.path, true)); err != nil {
		return fmt.Errorf("journal: opening %s: %w", db.path, err)
	}
	db.write.SetMaxOpenConns(1)
	db.write.SetMaxIdleConns(1)
	// The schema is brought up to date on the writer before any reader
	// connects, so readers never see a half-migrated file.
	if err := migrate(ctx, db.write, migrations, db.log); err != nil {
		return fmt.Errorf("journal: %s: %w", db.path, err)
	}
	if err := db.stmts.prepare(ctx, db.write); err != nil {
		return fmt.Errorf("journal: %s: %w", db.path, err)
	}
	if db.read, err = sql.Open("sqlite", dsn(db.path, false)); err != nil {
		return fmt.Errorf("journal: opening %s: %w", db.path, err)
	}
	db.read.SetMaxOpenConns(readConns)
	db.read.SetMaxIdleConns(readConns)
	if err := db.read.PingContext(ctx); err != nil {
		return fmt.Errorf("journal: opening %s for reading: %w", db.path, err)
	}
	return nil
}

// writerCacheKiB is the page cache of the writer's connection, in KiB
// (PRAGMA cache_size -writerCacheKiB). The writer appends at the end of
// the tables and reads little: a cache of 64 pages holds the pages it
// touches between commits, and what a long transaction leaves is spilled
// to the WAL. SQLite's default (2000 KiB) only grew the process: each
// cached page takes an 8 KiB slot of the Go SQLite's allocator, freshly
// mapped, so a 200,000-chunk flood in acprun faulted in some 1,000 more
// pages and peaked 4.5 MiB higher (30.5 instead of 26 MiB).
const writerCacheKiB = 256

// pageSize is the page size of a journal file this package creates (an
// existing file keeps its own: WAL mode cannot change it). SQLite writes
// each page a commit changes to the write-ahead log in two system calls,
// and those calls were most of a flood's commits: a flood's merged text
// events, some 2.3 KiB each, took a 4 KiB page apiece. With 16 KiB pages
// a 200,000-chunk acprun --events flood spent about a sixth less CPU
// (median cpu-ns/chunk 468 against 567, six alternate runs); 64 KiB pages
// did worse than 16 KiB in the journal's own flood of such rows. The
// caches are sized in KiB, so they hold the same memory in fewer pages.
const pageSize = 16 << 10

// walCheckpointPages is the writer's wal_autocheckpoint: SQLite moves the
// write-ahead log into the file once it holds this many pages, 4 MiB of
// 16 KiB pages, the bound its default of 1,000 pages gives 4 KiB ones. A
// checkpoint runs after a commit, which with a commit delay is off the
// Host's path; what is left for Close is at most this much, where a
// flood's whole log had waited for it (some 20 ms of acprun's exit after
// a 200,000-chunk flood, which ended 0.97-0.98x as long, median of 24
// alternate pairs).
const walCheckpointPages = 256

// dsn is the driver's name for the file: a file: URI, so that any
// character of the path is escaped, with the pragmas every connection
// needs. synchronous=NORMAL in WAL mode syncs at checkpoints only: a commit
// survives the process being killed, while a power loss may undo the last
// commits (never corrupting the file).
func dsn(path string, writer bool) string {
	q := url.Values{}
	q.Set("_busy_timeout", strconv.FormatInt(busyTimeout.Milliseconds(), 10))
	q.Set("_foreign_keys", "1")
	q.Set("_synchronous", "NORMAL")
	if writer {
		q.Set("_journal_mode", "WAL")
		q.Set("_txlock", "immediate")
		q.Add("_pragma", "cache_size(-"+strconv.Itoa(writerCacheKiB)+")")
		q.Add("_pragma", "page_size("+strconv.Itoa(pageSize)+")") // before WAL mode and the schema
		q.Add("_pragma", "wal_autocheckpoint("+strconv.Itoa(walCheckpointPages)+")")
	} else {
		q.Set("_query_only", "1")
	}
	u := url.URL{Scheme: "file", Path: path, RawQuery: q.Encode()}
	return u.String()
}

// Path is the file the journal was opened from, made absolute.
func (db *DB) Path() string { return db.path }

// Close commits what waits for a delayed commit and closes the journal.
// Calls that are running finish first; later calls fail.
func (db *DB) Close() error {
	var errs []error
	if db.commits != nil {
		errs = append(errs, db.commits.close(context.Background()))
	}
	errs = append(errs, db.stmts.close())
	for _, pool := range []*sql.DB{db.read, db.write} {
		if pool != nil {
			errs = append(errs, pool.Close())
		}
	}
	if db.lock != nil {
		errs = append(errs, db.lock.Close()) // closing releases the lock
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("journal: closing %s: %w", db.path, err)
	}
	return nil
}

// DefaultPath is where an app keeps its journal unless told otherwise:
// $XDG_DATA_HOME/acphost/journal.db, or ~/.local/share/acphost/journal.db
// when XDG_DATA_HOME is unset (or, as the XDG spec says to treat it, not
// absolute).
func DefaultPath() (string, error) {
	if dir := os.Getenv("XDG_DATA_HOME"); filepath.IsAbs(dir) {
		return filepath.Join(dir, "acphost", "journal.db"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("journal: no place for the journal: neither XDG_DATA_HOME nor HOME is set: %w", err)
	}
	return filepath.Join(home, ".local", "share", "acphost", "journal.db"), nil
}
