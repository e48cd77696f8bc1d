package sshdtest

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/pkg/sftp"
	"go.uber.org/goleak"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestSSHDAcceptsKeyAndServesExecAndSFTP(t *testing.T) {
	s := Start(t)
	check, err := knownhosts.New(s.KnownHostsFile)
	if err != nil {
		t.Fatal(err)
	}
	client, err := ssh.Dial("tcp", s.Addr, &ssh.ClientConfig{
		User:            s.User,
		Auth:            []ssh.AuthMethod{ssh.PublicKeys(s.Signer)},
		HostKeyCallback: check,
	})
	if err != nil {
		t.Fatalf("dial: %v; sshd: %s", err, s.Log())
	}
	defer client.Close()

	sess, err := client.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	out, err := sess.Output("echo hi")
	sess.Close()
	if err != nil || string(out) != "hi\n" {
		t.Fatalf("exec = %q, %v", out, err)
	}

	sc, err := sftp.NewClient(client)
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	if _, ok := sc.HasExtension("posix-rename@openssh.com"); !ok {
		t.Error("sftp-server does not offer posix-rename")
	}
	p := filepath.Join(t.TempDir(), "x")
	if err := os.WriteFile(p, []byte("data"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := sc.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var buf bytes.Buffer
	if _, err := f.WriteTo(&buf); err != nil || buf.String() != "data" {
		t.Fatalf("sftp read = %q, %v", buf.String(), err)
	}
}

func TestSSHDRefusesUnauthorizedKey(t *testing.T) {
	s := Start(t)
	_, pemBytes, err := newKey()
	if err != nil {
		t.Fatal(err)
	}
	signer, err := ssh.ParsePrivateKey(pemBytes)
	if err != nil {
		t.Fatal(err)
	}
	_, err = ssh.Dial("tcp", s.Addr, &ssh.ClientConfig{
		User:            s.User,
		Auth:            []ssh.AuthMethod{ssh.PublicKeys(signer)},
		HostKeyCallback: ssh.FixedHostKey(s.HostKey),
	})
	if err == nil {
		t.Fatal("sshd accepted a key that is not authorized")
	}
}

// TestSSHDLoginReadsTheTestsStartupFiles: a command runs with HOME the
// test's own, and the login shell reads the startup file written there
// (bash run by sshd reads ~/.bashrc), not the user's own.
func TestSSHDLoginReadsTheTestsStartupFiles(t *testing.T) {
	s := Start(t)
	client := s.Dial(t)
	run := func(cmd string) string {
		t.Helper()
		sess, err := client.NewSession()
		if err != nil {
			t.Fatal(err)
		}
		defer sess.Close()
		out, err := sess.Output(cmd)
		if err != nil {
			t.Fatalf("%s: %v", cmd, err)
		}
		return string(out)
	}
	if got := run(`echo "$HOME"`); got != s.Home+"\n" {
		t.Errorf("HOME = %q, want the test's %q", got, s.Home)
	}
	if got := run(`echo "[$SSHDTEST_STARTUP]"`); got != "[]\n" {
		t.Errorf("before SetStartup: %q", got)
	}
	s.SetStartup(t, "SSHDTEST_STARTUP=ran; export SSHDTEST_STARTUP\n")
	if got := run(`echo "[$SSHDTEST_STARTUP]"`); got != "[ran]\n" {
		t.Errorf("the login shell did not read the startup file SetStartup wrote: %q", got)
	}
}
