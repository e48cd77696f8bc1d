package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/acphost/acphost/internal/sshtest"
)

// A missing known_hosts file is reported as a host-key problem naming the
// file, not as a missing remote folder.
func TestSSHMissingKnownHosts(t *testing.T) {
	t.Parallel()
	server := sshtest.Start(t, nil)
	dir := t.TempDir()
	missing := filepath.Join(dir, "no_known_hosts")
	r := runAcprun(t, "--ssh", server.User+"@"+server.Addr, "--ssh-key", server.UserKeyFile, "--ssh-known-hosts", missing,
		"--cwd", dir, "--agent", "/bin/true", "hi")
	if r.code == exitOK {
		t.Fatalf("exit status 0 with a missing known_hosts; stderr:\n%s", r.stderr)
	}
	if !strings.Contains(r.stderr, "host key cannot be verified") || !strings.Contains(r.stderr, missing) ||
		strings.Contains(r.stderr, "file does not exist") {
		t.Errorf("stderr does not name the known_hosts problem:\n%s", r.stderr)
	}
}
