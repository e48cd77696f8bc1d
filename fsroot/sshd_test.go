package fsroot

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acphost/acphost/internal/sshdtest"
	"github.com/acphost/acphost/sshconn"
)

// TestRealSSHD runs the SFTP root and sshconn's dialling against OpenSSH's
// sshd and sftp-server (skipped when they are not installed).
func TestRealSSHD(t *testing.T) {
	srv := sshdtest.Start(t)
	conn := sshconn.New(destination(t, srv.User, srv.Addr), sshconn.Config{
		KeyFiles: []string{srv.KeyFile}, KnownHostsFiles: []string{srv.KnownHostsFile}, NoAgent: true,
	})
	defer conn.Close()
	cwd, outside := tempDir(t), tempDir(t)
	writeFile(t, filepath.Join(outside, "secret"), "secret")
	symlink(t, outside, filepath.Join(cwd, "out"))
	p := filepath.Join(cwd, "f.txt")
	writeFile(t, p, "old\r\n")
	if err := os.Chmod(p, 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := NewSFTPConn(ctx, conn, cwd, nil)
	if err != nil {
		t.Fatalf("NewSFTPConn: %v; sshd: %s", err, srv.Log())
	}
	defer r.Close()

	t.Run("round trip with posix-rename", func(t *testing.T) {
		client, err := r.sftpClient(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := client.HasExtension("posix-rename@openssh.com"); !ok {
			t.Fatal("OpenSSH sftp-server does not offer posix-rename")
		}
		content := "\ufeffnew\r\nsecond\n"
		if err := r.WriteTextFile(ctx, p, content); err != nil {
			t.Fatal(err)
		}
		if got, err := r.ReadTextFile(ctx, p, 2, 1); err != nil || got != "second\n" {
			t.Fatalf("read line 2 = %q, %v", got, err)
		}
		if got := readFile(t, p); got != content {
			t.Fatalf("disk = %q", got)
		}
		assertMode(t, p, 0o600)
		if err := r.WriteTextFile(ctx, filepath.Join(cwd, "x", "y.txt"), "made"); err != nil {
			t.Fatal(err)
		}
		noTempFiles(t, cwd)
	})

	t.Run("large packets with limits@openssh.com", func(t *testing.T) {
		if _, err := r.sftpClient(ctx); err != nil {
			t.Fatal(err)
		}
		if r.packet != sftpLargePacket {
			t.Fatalf("packet = %d bytes on OpenSSH's sftp-server, want %d", r.packet, sftpLargePacket)
		}
		// Numbered lines over several packets, with a short last one: a
		// request answered short, or data put at the wrong offset, shows.
		var b strings.Builder
		for i := 0; b.Len() < 5*sftpLargePacket+1000; i++ {
			fmt.Fprintf(&b, "line %d\n", i)
		}
		big := filepath.Join(cwd, "big.txt")
		if err := r.WriteTextFile(ctx, big, b.String()); err != nil {
			t.Fatal(err)
		}
		if readFile(t, big) != b.String() {
			t.Fatal("the file written differs from the content")
		}
		if got, err := r.ReadTextFile(ctx, big, 0, 0); err != nil || got != b.String() {
			t.Fatalf("read back %d bytes (%v), want the %d written", len(got), err, b.Len())
		}
	})

	t.Run("rename fallback overwrites on OpenSSH", func(t *testing.T) {
		r.noPosixRename = true
		defer func() { r.noPosixRename = false }()
		if err := r.WriteTextFile(ctx, p, "via fallback"); err != nil {
			t.Fatal(err)
		}
		if got := readFile(t, p); got != "via fallback" {
			t.Fatalf("disk = %q", got)
		}
		assertMode(t, p, 0o600)
		noTempFiles(t, cwd)
	})

	t.Run("symlink escape refused", func(t *testing.T) {
		for _, q := range []string{filepath.Join(cwd, "out", "secret"), filepath.Join(cwd, "out", "new")} {
			if _, err := r.ReadTextFile(ctx, q, 0, 0); !errors.Is(err, ErrOutsideRoot) {
				t.Errorf("read %s: %v", q, err)
			}
			if err := r.WriteTextFile(ctx, q, "x"); !errors.Is(err, ErrOutsideRoot) {
				t.Errorf("write %s: %v", q, err)
			}
		}
		if _, err := os.Stat(filepath.Join(outside, "new")); err == nil {
			t.Error("file created outside")
		}
	})

	t.Run("missing file", func(t *testing.T) {
		if _, err := r.ReadTextFile(ctx, filepath.Join(cwd, "missing"), 0, 0); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("missing: %v", err)
		}
	})

	t.Run("unknown host refused", func(t *testing.T) {
		empty := filepath.Join(t.TempDir(), "known_hosts")
		if err := os.WriteFile(empty, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := sshconn.Dial(ctx, destination(t, srv.User, srv.Addr), sshconn.Config{KeyFiles: []string{srv.KeyFile}, KnownHostsFiles: []string{empty}, NoAgent: true})
		if !errors.Is(err, sshconn.ErrUnknownHost) || !strings.Contains(err.Error(), srv.Addr) {
			t.Fatalf("unknown host: %v", err)
		}
	})
}
