package bridge

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
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

// WriteFile writes a temporary file beside path, syncs it and renames it
// over path, keeping the old file's mode.
func (LocalFS) WriteFile(_ context.Context, path string, data []byte) error {
	return writeFileAtomic(path, data, 0o644, 0o755)
}

// writeFileAtomic replaces path with data so that readers see the old or
// the new content, never a part: a temporary file in the same directory
// (with the old file's mode, else mode), synced, then renamed over path,
// and the directory synced. Missing directories are created with dirMode.
func writeFileAtomic(path string, data []byte, mode, dirMode fs.FileMode) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, dirMode); err != nil {
		return err
	}
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode().Perm()
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}
