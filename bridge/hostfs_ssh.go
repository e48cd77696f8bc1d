package bridge

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/pkg/sftp"

	"github.com/acphost/acphost/fsroot"
	"github.com/acphost/acphost/sshconn"
)

// hostFS returns the SSH host's file system over the shared connection, for
// profiles' checks and overlays on a remote workspace (for example a
// transcript check before resuming).
func (h *SSHHosts) hostFS(dest sshconn.Destination) HostFS { return &sshHostFS{conn: h.conn(dest)} }

// sshHostFS is HostFS over SFTP. Each call opens an SFTP session on the
// shared connection (re-dialled if it dropped); these calls are rare.
type sshHostFS struct {
	conn *sshconn.Conn
}

func (f *sshHostFS) client(ctx context.Context) (*sftp.Client, error) {
	conn, err := f.conn.Client(ctx)
	if err != nil {
		return nil, err
	}
	c, err := sftp.NewClient(conn)
	if err != nil {
		return nil, fmt.Errorf("bridge: sftp on %s: %w", f.conn.Destination(), err)
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

// WriteFile replaces a file on the host with fsroot's atomic write, over
// SFTP on the shared connection (see writeAtomic).
func (f *sshHostFS) WriteFile(ctx context.Context, p string, data []byte) error {
	err := writeAtomic(ctx, func(opts *fsroot.Options) (fsroot.Root, error) {
		return fsroot.NewSFTPConn(ctx, f.conn, "/", opts)
	}, p, data, 0o644, 0o755)
	if err != nil {
		return fmt.Errorf("bridge: on %s: %w", f.conn.Destination(), err)
	}
	return nil
}

// remoteHome returns the login directory on the host.
func (h *SSHHosts) remoteHome(ctx context.Context, dest sshconn.Destination) (string, error) {
	c, err := (&sshHostFS{conn: h.conn(dest)}).client(ctx)
	if err != nil {
		return "", err
	}
	defer c.Close()
	return c.Getwd()
}
