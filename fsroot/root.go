package fsroot

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"
	"sync"
	"time"
)

// Root is what one session's agent may read and write: its cwd plus the
// external directories granted to it. *Local and *SFTP implement it; all
// methods are safe for concurrent use.
type Root interface {
	// Cwd returns the session directory with symlinks resolved.
	Cwd() string
	// ReadTextFile returns the text of an absolute path, from 1-based line
	// `line` (0 = from the start), at most `limit` lines (0 = all).
	ReadTextFile(ctx context.Context, path string, line, limit int) (string, error)
	// WriteTextFile atomically replaces (or creates) the file at an absolute
	// path with content.
	WriteTextFile(ctx context.Context, path, content string) error
	// SetGrants replaces the complete list of granted external directories.
	SetGrants(ctx context.Context, dirs []string) error
	// AddGrant grants one more external directory.
	AddGrant(ctx context.Context, dir string) error
	// RemoveGrant withdraws a grant at once and reports whether it existed.
	RemoveGrant(dir string) bool
	// Grants returns the granted directories, symlinks resolved.
	Grants() []string
	// SetReadOnly turns the write gate on or off; reason is shown in refusals.
	SetReadOnly(readOnly bool, reason string)
	// Watch reports changes under the cwd and the grants until ctx ends or
	// the root closes, when the channel is closed.
	Watch(ctx context.Context) (<-chan Event, error)
	// Close releases the root; later calls fail with ErrClosed.
	Close() error
}

// Overlay serves the host's unsaved editor buffers. Buffer is called with the
// cleaned requested path, and again with the symlink-resolved path when that
// differs; ok=false means no open buffer, so the read goes to disk.
type Overlay interface {
	Buffer(path string) (text string, ok bool)
}

// Default limits used when the matching Options field is zero.
const (
	DefaultMaxFileSize    = 16 << 20
	DefaultFileMode       = fs.FileMode(0o644)
	DefaultDirMode        = fs.FileMode(0o755)
	DefaultDebounce       = 100 * time.Millisecond
	DefaultPollInterval   = 2 * time.Second
	DefaultPollMaxEntries = 10000
)

// Options configures a root. The zero value is usable: no grants, 16 MiB
// reads, 0644 files, 0755 directories, writes allowed, no overlay.
type Options struct {
	// Grants are external directories the agent may use besides the cwd.
	Grants []string
	// MaxFileSize caps reads in bytes (0 = DefaultMaxFileSize).
	MaxFileSize int64
	// MaxWriteSize caps the content of a write in bytes (0 = MaxFileSize,
	// so nothing is written that could not be read back).
	MaxWriteSize int64
	// FileMode is the mode of newly created files (0 = 0644). Existing files
	// keep their mode.
	FileMode fs.FileMode
	// DirMode is the mode of parent directories a write creates (0 = 0755).
	DirMode fs.FileMode
	// ReadOnly starts the root with writes refused, for ReadOnlyReason.
	ReadOnly       bool
	ReadOnlyReason string
	// Overlay, when set, is consulted before disk on every read.
	Overlay Overlay
	// OnWrite, when set, is called with the cleaned path after each
	// successful write so the host can refresh an open editor.
	OnWrite func(path string)
	// Debounce is how long Local.Watch gathers a burst of events before
	// reporting it (0 = DefaultDebounce).
	Debounce time.Duration
	// PollInterval is how often SFTP.Watch polls (0 = DefaultPollInterval).
	PollInterval time.Duration
	// PollMaxEntries bounds the directory entries SFTP.Watch lists per poll
	// (0 = DefaultPollMaxEntries); a large tree is covered over several polls.
	PollMaxEntries int
}

func (o Options) withDefaults() Options {
	if o.MaxFileSize <= 0 {
		o.MaxFileSize = DefaultMaxFileSize
	}
	if o.MaxWriteSize <= 0 {
		o.MaxWriteSize = o.MaxFileSize
	}
	if o.FileMode == 0 {
		o.FileMode = DefaultFileMode
	}
	if o.DirMode == 0 {
		o.DirMode = DefaultDirMode
	}
	if o.Debounce <= 0 {
		o.Debounce = DefaultDebounce
	}
	if o.PollInterval <= 0 {
		o.PollInterval = DefaultPollInterval
	}
	if o.PollMaxEntries <= 0 {
		o.PollMaxEntries = DefaultPollMaxEntries
	}
	return o
}

// target is a confined, symlink-free location: base is the resolved root
// directory that contains it, rel the slash path below base ("." for base).
type target struct {
	base string
	rel  string
}

func (t target) abs() string { return path.Join(t.base, t.rel) }

func (t target) dir() target { return target{t.base, path.Dir(t.rel)} }

func (t target) child(name string) target { return target{t.base, path.Join(t.rel, name)} }

// tempFile is the part of *os.File and *sftp.File an atomic write uses.
type tempFile interface {
	io.Writer
	Sync() error
	Chmod(mode fs.FileMode) error
	Close() error
}

// fsys is one storage backend. lstat and readlink take absolute paths (they
// are used to resolve symlinks); the rest take confined targets.
type fsys interface {
	lstat(ctx context.Context, abs string) (fs.FileInfo, error)
	readlink(ctx context.Context, abs string) (string, error)
	// readFile returns the file's text, checked to be UTF-8 (a
	// *NotTextError otherwise).
	readFile(ctx context.Context, t target, max int64) (string, error)
	mkdir(ctx context.Context, t target, perm fs.FileMode) error
	create(ctx context.Context, t target) (tempFile, error)
	rename(ctx context.Context, from, to target) error
	remove(ctx context.Context, t target) error
	syncDir(ctx context.Context, t target) error
	// checkWritable opens the existing file for writing, without
	// truncating it, and closes it again: the permission check of the
	// system that owns the file, with its users, groups, ACLs and mounts.
	checkWritable(ctx context.Context, t target) error
}

// rootDir is the cwd or a grant, as given and as resolved.
type rootDir struct {
	given, resolved string
}

// core holds what Local and SFTP share: confinement, grants, the write gate,
// line slicing, the overlay and the atomic write procedure.
type core struct {
	fs   fsys
	opts Options
	cwd  rootDir

	mu       sync.RWMutex
	grants   []rootDir
	readOnly bool
	reason   string
	// grantsChanged is closed and replaced whenever the grants change, so
	// watchers can pick up new directories.
	grantsChanged chan struct{}

	closeOnce sync.Once
	done      chan struct{}

	// wrapWriter is a test seam: it wraps the temporary file's writer so a
	// test can fail a write half-way.
	wrapWriter func(io.Writer) io.Writer
}

func newCore(ctx context.Context, backend fsys, cwd string, opts Options) (*core, error) {
	c := &core{
		fs:            backend,
		opts:          opts.withDefaults(),
		grantsChanged: make(chan struct{}),
		done:          make(chan struct{}),
		readOnly:      opts.ReadOnly,
		reason:        opts.ReadOnlyReason,
	}
	dir, err := c.resolveDir(ctx, "cwd", cwd)
	if err != nil {
		return nil, err
	}
	c.cwd = dir
	if err := c.SetGrants(ctx, opts.Grants); err != nil {
		return nil, err
	}
	return c, nil
}

// Cwd returns the session directory with symlinks resolved.
func (c *core) Cwd() string { return c.cwd.resolved }

// resolveDir checks that dir is an absolute path to an existing directory
// and resolves its symlinks, so confinement compares real locations.
func (c *core) resolveDir(ctx context.Context, op, dir string) (rootDir, error) {
	if !path.IsAbs(dir) {
		return rootDir{}, pathErr(op, dir, ErrNotAbsolute)
	}
	clean := path.Clean(dir)
	resolved, exists, err := resolve(ctx, c.fs, clean)
	if err != nil {
		return rootDir{}, pathErr(op, dir, err)
	}
	if !exists {
		return rootDir{}, pathErr(op, dir, fs.ErrNotExist)
	}
	info, err := c.fs.lstat(ctx, resolved)
	if err != nil {
		return rootDir{}, pathErr(op, dir, err)
	}
	if !info.IsDir() {
		return rootDir{}, pathErr(op, dir, errors.New("not a directory"))
	}
	return rootDir{given: clean, resolved: resolved}, nil
}

func (c *core) isClosed() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// within reports whether p is dir or lies below it (both clean).
func within(p, dir string) bool {
	if dir == "/" {
		return true
	}
	return p == dir || strings.HasPrefix(p, dir+"/")
}

// confine cleans an absolute path, resolves its symlinks and finds the root
// that contains it. A path that does not even lexically start inside a root
// is refused before any file-system access, so refusals reveal nothing about
// what exists outside.
func (c *core) confine(ctx context.Context, op, p string) (clean string, t target, err error) {
	if c.isClosed() {
		return "", target{}, pathErr(op, p, ErrClosed)
	}
	if !path.IsAbs(p) {
		return "", target{}, pathErr(op, p, ErrNotAbsolute)
	}
	clean = path.Clean(p)
	roots, _ := c.roots()
	inside := false
	for _, r := range roots {
		if within(clean, r.given) || within(clean, r.resolved) {
			inside = true
			break
		}
	}
	if !inside {
		return clean, target{}, pathErr(op, p, ErrOutsideRoot)
	}
	resolved, _, err := resolve(ctx, c.fs, clean)
	if err != nil {
		return clean, target{}, pathErr(op, p, err)
	}
	// Re-read the roots: a grant removed while we resolved must not count.
	roots, _ = c.roots()
	for _, r := range roots {
		if within(resolved, r.resolved) {
			rel := "."
			if resolved != r.resolved {
				rel = strings.TrimPrefix(strings.TrimPrefix(resolved, r.resolved), "/")
			}
			return clean, target{base: r.resolved, rel: rel}, nil
		}
	}
	return clean, target{}, pathErr(op, p, outsideErr(clean, resolved))
}

// ReadTextFile returns the file's text exactly as stored (BOM, CRLF and all),
// from 1-based line `line` (0 = from the start), at most `limit` lines
// (0 = all). An overlay buffer wins over disk. A missing file gives an error
// satisfying errors.Is(err, fs.ErrNotExist); a file (or buffer) that is not
// valid UTF-8 is refused with a *NotTextError, never served altered.
func (c *core) ReadTextFile(ctx context.Context, p string, line, limit int) (string, error) {
	if line < 0 || limit < 0 {
		return "", pathErr("read", p, ErrInvalidRange)
	}
	clean, t, err := c.confine(ctx, "read", p)
	if err != nil {
		return "", err
	}
	if c.opts.Overlay != nil {
		text, ok := c.opts.Overlay.Buffer(clean)
		if !ok && t.abs() != clean {
			text, ok = c.opts.Overlay.Buffer(t.abs())
		}
		if ok {
			if int64(len(text)) > c.opts.MaxFileSize {
				return "", pathErr("read", p, tooLarge(int64(len(text)), c.opts.MaxFileSize))
			}
			if err := checkText(text); err != nil {
				return "", pathErr("read", p, err)
			}
			return sliceLines(text, line, limit), nil
		}
	}
	if err := ctx.Err(); err != nil {
		return "", pathErr("read", p, err)
	}
	text, err := c.fs.readFile(ctx, t, c.opts.MaxFileSize)
	if err != nil {
		return "", pathErr("read", p, err)
	}
	// readFile has checked the whole file, even for a slice: an agent that
	// reads part of a file and writes the whole of it back must not get
	// that far.
	return sliceLines(text, line, limit), nil
}

func tooLarge(size, max int64) error {
	return fmt.Errorf("%w (%d bytes, limit %d)", ErrTooLarge, size, max)
}
