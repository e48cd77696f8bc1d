package bridge

import (
	"context"
	"errors"
	"io/fs"
	"math"
	"os"
	"path/filepath"

	"github.com/acphost/acphost/fsroot"
)

// HostFS is the agent host's file system as profiles need it: to check
// that an agent's transcript exists before resuming, and to write
// workspace settings overlays before a launch. LocalFS serves the local
// machine; an SSH workspace supplies one that works remotely.
type HostFS interface {
	// Exists reports whether path exists.
	Exists(ctx context.Context, path string) (bool, error)
	// ReadFile returns a file's content; a missing file is an error
	// satisfying errors.Is(err, fs.ErrNotExist).
	ReadFile(ctx context.Context, path string) ([]byte, error)
	// WriteFile replaces a file atomically (readers see the old or the new
	// content, never a part), creating its directory.
	WriteFile(ctx context.Context, path string, data []byte) error
}

// LocalFS is the local machine's file system.
type LocalFS struct{}

// Exists reports whether path exists.
func (LocalFS) Exists(_ context.Context, path string) (bool, error) {
	_, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

// ReadFile returns a file's content.
func (LocalFS) ReadFile(_ context.Context, path string) ([]byte, error) { return os.ReadFile(path) }

// WriteFile replaces path with fsroot's atomic write (see writeAtomic).
// A relative path is taken from the current directory.
func (LocalFS) WriteFile(ctx context.Context, path string, data []byte) error {
	return writeFileLocal(ctx, path, data, 0o644, 0o755)
}

// writeFileLocal is writeAtomic on this machine.
func writeFileLocal(ctx context.Context, path string, data []byte, mode, dirMode fs.FileMode) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	return writeAtomic(ctx, func(opts *fsroot.Options) (fsroot.Root, error) {
		return fsroot.NewLocal("/", opts)
	}, abs, data, mode, dirMode)
}

// writeAtomic replaces the file at the absolute path p with data using the
// module's one atomic write, fsroot's, on a root of "/" (which confines
// nothing) that open makes: a temporary file in the same directory, given
// the old file's mode (else mode) before any byte, synced and renamed over
// p; missing directories are made with dirMode; an existing file this user
// may not write is refused (fs.ErrPermission) and left alone; on failure
// the old file is intact and the temporary removed. Readers see the old or
// the new content, never a part.
func writeAtomic(ctx context.Context, open func(*fsroot.Options) (fsroot.Root, error), p string, data []byte, mode, dirMode fs.FileMode) error {
	// No size cap: these are the host's own files, not an agent's writes.
	root, err := open(&fsroot.Options{FileMode: mode, DirMode: dirMode, MaxWriteSize: math.MaxInt64})
	if err != nil {
		return err
	}
	defer root.Close()
	return root.WriteTextFile(ctx, p, string(data))
}
