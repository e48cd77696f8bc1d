package fsroot

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/pkg/sftp"

	"github.com/acphost/acphost/internal/sshtest"
)

// TestResolveSFTPDir: links (relative, absolute, chained) are followed on
// the remote side; a file, a missing path and a relative path are refused.
func TestResolveSFTPDir(t *testing.T) {
	srv := sshtest.Start(t, nil)
	client, err := sftp.NewClient(srv.Dial(t))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	base, _ := filepath.EvalSymlinks(t.TempDir())
	real := filepath.Join(base, "real", "sub")
	os.MkdirAll(real, 0o755)
	os.WriteFile(filepath.Join(base, "file"), nil, 0o644)
	os.Symlink("real", filepath.Join(base, "rel"))
	os.Symlink(filepath.Join(base, "rel"), filepath.Join(base, "abs"))
	ctx := context.Background()
	for in, want := range map[string]string{
		base + "/real/sub":   real,
		base + "/rel/sub":    real,
		base + "/abs/sub/.":  real,
		base + "/abs/../rel": filepath.Join(base, "real"),
	} {
		if got, err := ResolveSFTPDir(ctx, client, in); err != nil || got != want {
			t.Errorf("ResolveSFTPDir(%s) = %q, %v; want %s", in, got, err, want)
		}
	}
	if _, err := ResolveSFTPDir(ctx, client, base+"/missing"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing: %v", err)
	}
	for _, bad := range []string{base + "/file", "relative"} {
		if _, err := ResolveSFTPDir(ctx, client, bad); err == nil {
			t.Errorf("ResolveSFTPDir(%s) succeeded", bad)
		}
	}
}
