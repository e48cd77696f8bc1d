//go:build unix

package journal

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// lockFile takes an exclusive lock on the file at path (created 0600 when
// missing) and returns it open: the lock lasts until the file is closed,
// or the process dies. It is an flock on a file beside the journal, not a
// SQLite lock, so readers of the journal itself are never blocked. The
// holder writes its program and pid into the file, so the next one to try
// can say who holds it.
func lockFile(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("journal: opening the lock %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("journal: %s is in use by %s; close that program, or open another journal file: %w",
				path[:len(path)-len(".lock")], readHolder(path), ErrInUse)
		}
		return nil, fmt.Errorf("journal: locking %s: %w", path, err)
	}
	writeHolder(f)
	return f, nil
}
