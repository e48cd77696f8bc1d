package bridge

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acphost/acphost/internal/nonroot"
	"github.com/acphost/acphost/internal/sshtest"
	"github.com/acphost/acphost/sshconn"
)

// TestHostWritesAreFsrootsAtomicWrite checks, as a user without root's
// bypass, that the bridge's own writes (LocalFS and the SSH host's HostFS,
// which carry settings overlays, and the session store) have fsroot's
// guarantees: a file the user may not write is refused with
// fs.ErrPermission and left as it is although its directory is writable, a
// writable file keeps its mode, missing directories are made, and no
// temporary file is left.
func TestHostWritesAreFsrootsAtomicWrite(t *testing.T) {
	if !nonroot.Run(t) {
		return
	}
	srv := sshtest.Start(t, nil)
	hosts := NewSSHHosts(sshconn.Config{KeyFiles: []string{srv.UserKeyFile}, KnownHostsFiles: []string{srv.KnownHostsFile}, NoAgent: true})
	defer hosts.Close()
	ctx := context.Background()
	for name, fsys := range map[string]HostFS{"local": LocalFS{}, "ssh": hosts.hostFS(*sshTarget(t, srv.Addr, srv.User))} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			locked, private := filepath.Join(dir, "locked.json"), filepath.Join(dir, "private.json")
			writeMode(t, locked, "old", 0o400)
			writeMode(t, private, "old", 0o640)

			if err := fsys.WriteFile(ctx, locked, []byte("new")); !errors.Is(err, fs.ErrPermission) {
				t.Errorf("write over a read-only file: %v, want fs.ErrPermission", err)
			}
			if b, _ := os.ReadFile(locked); string(b) != "old" {
				t.Errorf("read-only file replaced: %q", b)
			}
			if err := fsys.WriteFile(ctx, private, []byte("new")); err != nil {
				t.Fatal(err)
			}
			if info, err := os.Stat(private); err != nil || info.Mode().Perm() != 0o640 {
				t.Errorf("mode after the write: %v, %v; want 0640", info, err)
			}
			made := filepath.Join(dir, "a", "b", "c.json")
			if err := fsys.WriteFile(ctx, made, []byte("{}")); err != nil {
				t.Fatal(err)
			}
			if b, err := os.ReadFile(made); err != nil || string(b) != "{}" {
				t.Errorf("file in new directories: %q, %v", b, err)
			}
			noTemporaries(t, dir)
		})
	}

	t.Run("store", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "sessions.json")
		writeMode(t, path, "{}", 0o400)
		if err := NewFileStore(path).Save("k", Record{NativeSessionID: "s"}); !errors.Is(err, fs.ErrPermission) {
			t.Errorf("save over a read-only store: %v, want fs.ErrPermission", err)
		}
		if b, _ := os.ReadFile(path); string(b) != "{}" {
			t.Errorf("read-only store replaced: %q", b)
		}
		noTemporaries(t, filepath.Dir(path))
	})
}

func writeMode(t *testing.T, path, content string, mode fs.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

// noTemporaries fails when an atomic write left a temporary file in dir.
func noTemporaries(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".tmp") {
			t.Errorf("temporary file left behind: %s", e.Name())
		}
	}
}
