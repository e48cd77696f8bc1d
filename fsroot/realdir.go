package fsroot

import (
	"context"
	"fmt"
	"io/fs"
	"path"

	"github.com/pkg/sftp"
)

// ResolveSFTPDir returns dir, an absolute path on the host of client, with
// every symlink in it resolved the way the SFTP root resolves them
// (component by component, not trusting the server's realpath), and checks
// that it is an existing directory. Errors wrap fs.ErrNotExist when it does
// not exist. It is for code that confines remote paths outside a Root, such
// as the working directory of a command run over SSH.
func ResolveSFTPDir(ctx context.Context, client *sftp.Client, dir string) (string, error) {
	if !path.IsAbs(dir) {
		return "", fmt.Errorf("fsroot: %s is not an absolute path", dir)
	}
	resolved, exists, err := resolve(ctx, sftpLinks{client}, path.Clean(dir))
	if err != nil {
		return "", fmt.Errorf("fsroot: resolving %s: %w", dir, err)
	}
	if !exists {
		return "", fmt.Errorf("fsroot: %s: %w", dir, fs.ErrNotExist)
	}
	fi, err := client.Stat(resolved)
	if err != nil {
		return "", fmt.Errorf("fsroot: %s: %w", dir, err)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("fsroot: %s is not a directory", dir)
	}
	return resolved, nil
}

// sftpLinks resolves links over a plain SFTP client.
type sftpLinks struct{ c *sftp.Client }

func (l sftpLinks) lstat(_ context.Context, abs string) (fs.FileInfo, error) { return l.c.Lstat(abs) }

func (l sftpLinks) readlink(_ context.Context, abs string) (string, error) { return l.c.ReadLink(abs) }
