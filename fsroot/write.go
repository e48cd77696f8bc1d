package fsroot

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"
)

// MaxWriteSize returns the largest content, in bytes, WriteTextFile
// accepts. A host's wire layer can use it to refuse a bigger write before
// decoding it.
func (c *core) MaxWriteSize() int64 { return c.opts.MaxWriteSize }

// WriteTextFile atomically replaces (or creates) the file: the content goes
// to a temporary file in the same directory, is synced, given the old file's
// mode (or FileMode), and renamed over the target. Missing parent directories
// are created, only inside the root. Content over MaxWriteSize is refused
// with ErrTooLarge, and an existing file this user may not write with an
// error satisfying errors.Is(err, fs.ErrPermission), both before anything
// is written. On failure the old content is intact and the temporary file
// is removed.
func (c *core) WriteTextFile(ctx context.Context, p, content string) error {
	c.mu.RLock()
	readOnly, reason := c.readOnly, c.reason
	c.mu.RUnlock()
	if readOnly {
		return pathErr("write", p, readOnlyErr(reason))
	}
	if n := int64(len(content)); n > c.opts.MaxWriteSize {
		return pathErr("write", p, fmt.Errorf("%w (%d bytes to write, limit %d)", ErrTooLarge, n, c.opts.MaxWriteSize))
	}
	clean, t, err := c.confine(ctx, "write", p)
	if err != nil {
		return err
	}
	if err := c.writeAtomic(ctx, t, content); err != nil {
		return pathErr("write", p, err)
	}
	if c.opts.OnWrite != nil {
		c.opts.OnWrite(clean)
	}
	return nil
}

func (c *core) writeAtomic(ctx context.Context, t target, content string) error {
	if t.rel == "." {
		return ErrNotRegular
	}
	mode := c.opts.FileMode
	info, err := c.fs.lstat(ctx, t.abs())
	switch {
	case err == nil && !info.Mode().IsRegular():
		return ErrNotRegular
	case err == nil:
		mode = info.Mode().Perm()
		// The rename needs only the directory's permission; the file's own
		// says whether this user may change it.
		if err := c.fs.checkWritable(ctx, t); err != nil {
			return notWritable(err)
		}
	case errors.Is(err, fs.ErrNotExist):
		if err := c.mkdirParents(ctx, t.dir()); err != nil {
			return err
		}
	default:
		return err
	}

	tmp := t.dir().child("." + path.Base(t.rel) + ".acphost-" + randomSuffix())
	f, err := c.fs.create(ctx, tmp)
	if err != nil {
		return err
	}
	committed := false
	defer func() {
		if !committed {
			_ = f.Close()
			_ = c.fs.remove(context.WithoutCancel(ctx), tmp)
		}
	}()
	// The mode is set before any byte is written, so the content of a
	// private file is never readable through the temporary.
	if err := f.Chmod(mode); err != nil {
		return err
	}
	var w io.Writer = f
	if c.wrapWriter != nil {
		w = c.wrapWriter(f)
	}
	if _, err := io.Copy(w, strings.NewReader(content)); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := c.fs.rename(ctx, tmp, t); err != nil {
		return err
	}
	committed = true
	// The rename is done and visible; a directory sync that the platform or
	// server cannot do only weakens durability, so it is best effort.
	_ = c.fs.syncDir(ctx, t.dir())
	return nil
}

// mkdirParents creates the missing directories of dir from its root down.
// dir is confined and symlink-free, so every directory made is in the root.
func (c *core) mkdirParents(ctx context.Context, dir target) error {
	if dir.rel == "." {
		return nil
	}
	parts := strings.Split(dir.rel, "/")
	cur := target{base: dir.base, rel: "."}
	for _, part := range parts {
		cur = cur.child(part)
		info, err := c.fs.lstat(ctx, cur.abs())
		if err == nil {
			if !info.IsDir() {
				return fmt.Errorf("%s is not a directory", cur.abs())
			}
			continue
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		if err := c.fs.mkdir(ctx, cur, c.opts.DirMode); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
	}
	return nil
}

// notWritable explains a failed write-permission check; a refusal stays
// errors.Is(err, fs.ErrPermission).
func notWritable(err error) error {
	if errors.Is(err, fs.ErrPermission) {
		return fmt.Errorf("the file is not writable by this user, so it is left as it is: %w", err)
	}
	return err
}

func randomSuffix() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:]) + ".tmp"
}
