package sshconn

import (
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acphost/acphost/fsroot"
	"github.com/acphost/acphost/internal/nonroot"
	"github.com/acphost/acphost/internal/sshtest"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// checkHostKeyError asserts that err is a host-key error naming file, and
// cannot be read as a missing path.
func checkHostKeyError(t *testing.T, what string, err error, file string) {
	t.Helper()
	if !errors.Is(err, ErrHostKey) || !strings.Contains(err.Error(), file) {
		t.Errorf("%s: %v; want ErrHostKey naming %s", what, err, file)
	}
	if errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%s reads as a missing file: %v", what, err)
	}
}

// TestKnownHostsProblemsAreHostKeyErrors checks that a missing known_hosts
// file, a directory in its place, an unknown host and a changed key are all
// ErrHostKey naming the file, and that an SFTP root reports a missing
// known_hosts differently from a missing cwd.
func TestKnownHostsProblemsAreHostKeyErrors(t *testing.T) {
	srv := sshtest.Start(t, nil)
	dir := t.TempDir()
	missing := filepath.Join(dir, "no_known_hosts")
	asDir := filepath.Join(dir, "known_hosts_dir")
	if err := os.Mkdir(asDir, 0o755); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty")
	os.WriteFile(empty, nil, 0o600)
	_, otherPriv, _ := ed25519.GenerateKey(rand.Reader)
	other, _ := ssh.NewSignerFromKey(otherPriv)
	changed := filepath.Join(dir, "changed")
	os.WriteFile(changed, []byte(knownhosts.Line([]string{knownhosts.Normalize(srv.Addr)}, other.PublicKey())+"\n"), 0o600)
	for _, tc := range []struct{ what, file string }{
		{"missing known_hosts", missing},
		{"directory as known_hosts", asDir},
		{"unknown host", empty},
		{"changed host key", changed},
	} {
		cfg := dialConfig(srv)
		cfg.KnownHostsFiles = []string{tc.file}
		_, err := Dial(ctx, destination(t, srv), cfg)
		checkHostKeyError(t, tc.what, err, tc.file)
	}

	cwd := t.TempDir()
	cfg := dialConfig(srv)
	cfg.KnownHostsFiles = []string{missing}
	conn := New(destination(t, srv), cfg)
	defer conn.Close()
	_, hostErr := fsroot.NewSFTPConn(ctx, conn, cwd, nil)
	checkHostKeyError(t, "SFTP root with a missing known_hosts", hostErr, missing)

	good := New(destination(t, srv), dialConfig(srv))
	defer good.Close()
	_, cwdErr := fsroot.NewSFTPConn(ctx, good, filepath.Join(cwd, "gone"), nil)
	if !errors.Is(cwdErr, fs.ErrNotExist) || errors.Is(cwdErr, ErrHostKey) {
		t.Fatalf("missing cwd: %v", cwdErr)
	}
	if hostErr != nil && hostErr.Error() == cwdErr.Error() {
		t.Fatalf("missing known_hosts and missing cwd read the same: %v", cwdErr)
	}
}

// TestUnreadableKnownHostsIsHostKeyError checks, as a user without root's
// bypass, that a known_hosts file the user may not read is an ErrHostKey
// naming the file.
func TestUnreadableKnownHostsIsHostKeyError(t *testing.T) {
	if !nonroot.Run(t) {
		return
	}
	srv := sshtest.Start(t, nil)
	locked := filepath.Join(t.TempDir(), "known_hosts")
	if err := os.WriteFile(locked, []byte(srv.KnownHostsLine()+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(locked, 0); err != nil {
		t.Fatal(err)
	}
	cfg := dialConfig(srv)
	cfg.KnownHostsFiles = []string{locked}
	_, err := Dial(ctx, destination(t, srv), cfg)
	checkHostKeyError(t, "unreadable known_hosts", err, locked)
	if !strings.Contains(err.Error(), "permission denied") {
		t.Errorf("unreadable known_hosts does not say why: %v", err)
	}
}
