package fsroot

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
)

// maxSymlinks bounds link chains the way the kernel does (ELOOP at 40).
const maxSymlinks = 40

var errSymlinkLoop = errors.New("too many levels of symbolic links")

// linkFS is the part of a backend that resolve needs.
type linkFS interface {
	lstat(ctx context.Context, abs string) (fs.FileInfo, error)
	readlink(ctx context.Context, abs string) (string, error)
}

// resolve returns the real location of the clean absolute path p: every
// symlink in it is replaced by its target, component by component, through
// the backend, so Local and SFTP resolve identically (the SFTP realpath
// request cannot be trusted to follow links on every server). When a
// component does not exist, the rest is appended to the resolved existing
// prefix and exists is false: a new file is judged by its nearest existing
// parent.
func resolve(ctx context.Context, fsys linkFS, p string) (resolved string, exists bool, err error) {
	pending := splitPath(p)
	cur := "/"
	links := 0
	for len(pending) > 0 {
		if err := ctx.Err(); err != nil {
			return "", false, err
		}
		name := pending[0]
		pending = pending[1:]
		next := path.Join(cur, name)
		info, err := fsys.lstat(ctx, next)
		if errors.Is(err, fs.ErrNotExist) {
			return path.Join(append([]string{next}, pending...)...), false, nil
		}
		if err != nil {
			return "", false, err
		}
		if info.Mode()&fs.ModeSymlink != 0 {
			links++
			if links > maxSymlinks {
				return "", false, errSymlinkLoop
			}
			dest, err := fsys.readlink(ctx, next)
			if err != nil {
				return "", false, err
			}
			if !path.IsAbs(dest) {
				dest = path.Join(cur, dest)
			}
			// Restart from the link's target, then continue with the rest.
			pending = append(splitPath(path.Clean(dest)), pending...)
			cur = "/"
			continue
		}
		if len(pending) > 0 && !info.IsDir() {
			return "", false, fmt.Errorf("%s is not a directory", next)
		}
		cur = next
	}
	return cur, true, nil
}

func splitPath(p string) []string {
	p = strings.Trim(p, "/")
	if p == "" {
		return nil
	}
	return strings.Split(p, "/")
}
