package fsroot

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
	"syscall"
)

// Local is a Root on the machine's own file system.
//
// After a path is confined, every open, create, rename and mkdir goes through
// an os.Root for the directory that contains it, so a symlink swapped in
// between the check and the use still cannot lead outside that directory.
type Local struct {
	*core

	mu      sync.Mutex
	osRoots map[string]*os.Root
	// watchers counts running Watch goroutines so Close can wait for them.
	watchers sync.WaitGroup
}

var _ Root = (*Local)(nil)

// NewLocal returns a root for the session directory cwd (absolute, existing).
// opts may be nil.
func NewLocal(cwd string, opts *Options) (*Local, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	l := &Local{osRoots: make(map[string]*os.Root)}
	c, err := newCore(context.Background(), localFS{l}, cwd, o)
	if err != nil {
		return nil, err
	}
	l.core = c
	return l, nil
}

// Close stops every watcher and releases the open directories. Reads and
// writes after Close fail with ErrClosed.
func (l *Local) Close() error {
	l.closeOnce.Do(func() { close(l.done) })
	l.watchers.Wait()
	l.mu.Lock()
	defer l.mu.Unlock()
	var errs []error
	for base, r := range l.osRoots {
		errs = append(errs, r.Close())
		delete(l.osRoots, base)
	}
	return errors.Join(errs...)
}

// osRoot returns the cached os.Root for a resolved root directory.
func (l *Local) osRoot(base string) (*os.Root, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.isClosed() {
		return nil, ErrClosed
	}
	if r, ok := l.osRoots[base]; ok {
		return r, nil
	}
	r, err := os.OpenRoot(base)
	if err != nil {
		return nil, err
	}
	l.osRoots[base] = r
	return r, nil
}

// localReadPiece is how much of a file one read(2) brings in: small enough
// that checking it for UTF-8 right after finds it in the L2 cache, large
// enough that the system calls cost next to nothing.
const localReadPiece = 256 << 10

// localFS is the fsys of a Local root.
type localFS struct{ l *Local }

func (b localFS) lstat(_ context.Context, abs string) (fs.FileInfo, error) {
	return os.Lstat(abs)
}

func (b localFS) readlink(_ context.Context, abs string) (string, error) {
	return os.Readlink(abs)
}

func (b localFS) readFile(_ context.Context, t target, max int64) (string, error) {
	r, err := b.l.osRoot(t.base)
	if err != nil {
		return "", err
	}
	// O_NONBLOCK: opening a FIFO must not hang; it is refused below.
	f, err := r.OpenFile(t.rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return "", err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return "", err
	}
	if !info.Mode().IsRegular() {
		return "", ErrNotRegular
	}
	if info.Size() > max {
		return "", tooLarge(info.Size(), max)
	}
	return readAllCapped(f, info.Size(), max, localReadPiece)
}

func (b localFS) mkdir(_ context.Context, t target, perm fs.FileMode) error {
	r, err := b.l.osRoot(t.base)
	if err != nil {
		return err
	}
	return r.Mkdir(t.rel, perm)
}

func (b localFS) create(_ context.Context, t target) (tempFile, error) {
	r, err := b.l.osRoot(t.base)
	if err != nil {
		return nil, err
	}
	return r.OpenFile(t.rel, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
}

func (b localFS) rename(_ context.Context, from, to target) error {
	if from.base != to.base {
		return fmt.Errorf("rename across roots %s and %s", from.base, to.base)
	}
	r, err := b.l.osRoot(to.base)
	if err != nil {
		return err
	}
	return r.Rename(from.rel, to.rel)
}

func (b localFS) remove(_ context.Context, t target) error {
	r, err := b.l.osRoot(t.base)
	if err != nil {
		return err
	}
	return r.Remove(t.rel)
}

func (b localFS) syncDir(_ context.Context, t target) error {
	r, err := b.l.osRoot(t.base)
	if err != nil {
		return err
	}
	d, err := r.Open(t.rel)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

func (b localFS) checkWritable(_ context.Context, t target) error {
	r, err := b.l.osRoot(t.base)
	if err != nil {
		return err
	}
	// O_NONBLOCK: a FIFO swapped in since the lstat must not hang the open.
	f, err := r.OpenFile(t.rel, os.O_WRONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return err
	}
	return f.Close()
}
