package bridge

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"

	"github.com/pkg/sftp"
)

// HostFS returns the SSH host's file system over the shared connection, for
// profiles' checks and overlays on a remote workspace (for example a
// transcript check before resuming).
func (h *SSHHosts) HostFS(target SSHTarget) HostFS { return &sshHostFS{hosts: h, target: target} }

// sshHostFS is HostFS over SFTP. Each call opens an SFTP session on the
// shared connection (re-dialled if it dropped); these calls are rare.
type sshHostFS struct {
	hosts  *SSHHosts
	target SSHTarget
}

func (f *sshHostFS) client(ctx context.Context) (*sftp.Client, error) {
	conn, err := f.hosts.Conn(f.target).Client(ctx)
	if err != nil {
		return nil, err
	}
	c, err := sftp.NewClient(conn)
	if err != nil {
		return nil, fmt.Errorf("bridge: sftp on %s: %w", f.target, err)
	}
	return c, nil
}

// Exists reports whether path exists on the host.
func (f *sshHostFS) Exists(ctx context.Context, p string) (bool, error) {
	c, err := f.client(ctx)
	if err != nil {
		return false, err
	}
	defer c.Close()
	_, err = c.Stat(p)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

// ReadFile returns a file's content from the host.
func (f *sshHostFS) ReadFile(ctx context.Context, p string) ([]byte, error) {
	c, err := f.client(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	file, err := c.Open(p)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	return io.ReadAll(file)
}

// WriteFile replaces a file on the host atomically: a temporary file beside
// it, then a POSIX rename over it (the server must offer the
// posix-rename extension, as OpenSSH does).
func (f *sshHostFS) WriteFile(ctx context.Context, p string, data []byte) error {
	c, err := f.client(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	dir := path.Dir(p)
	if err := c.MkdirAll(dir); err != nil {
		return err
	}
	mode := fs.FileMode(0o644)
	if fi, err := c.Stat(p); err == nil {
		mode = fi.Mode().Perm()
	}
	tmp := path.Join(dir, "."+path.Base(p)+".acphost.tmp")
	file, err := c.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC)
	if err != nil {
		return err
	}
	if err := c.Chmod(tmp, mode); err != nil {
		file.Close()
		c.Remove(tmp)
		return err
	}
	if _, err := file.Write(data); err != nil {
		file.Close()
		c.Remove(tmp)
		return err
	}
	if err := file.Close(); err != nil {
		c.Remove(tmp)
		return err
	}
	if err := c.PosixRename(tmp, p); err != nil {
		c.Remove(tmp)
		return fmt.Errorf("bridge: replacing %s on %s: %w", p, f.target, err)
	}
	return nil
}

// remoteHome returns the login directory on the host.
func (h *SSHHosts) remoteHome(ctx context.Context, target SSHTarget) (string, error) {
	c, err := (&sshHostFS{hosts: h, target: target}).client(ctx)
	if err != nil {
		return "", err
	}
	defer c.Close()
	return c.Getwd()
}
