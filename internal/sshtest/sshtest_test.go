package sshtest

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pkg/sftp"
	"go.uber.org/goleak"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestExecWiresEnvStdinStdoutStderrAndStatus(t *testing.T) {
	s := Start(t, nil)
	sess, err := s.Dial(t).NewSession()
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	if err := sess.Setenv("GREETING", "hello"); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	sess.Stdin = strings.NewReader("from stdin\n")
	sess.Stdout, sess.Stderr = &stdout, &stderr
	err = sess.Run(`echo "$GREETING"; cat; echo oops >&2; exit 3`)
	var exitErr *ssh.ExitError
	if !errors.As(err, &exitErr) || exitErr.ExitStatus() != 3 {
		t.Fatalf("Run error = %v, want exit status 3", err)
	}
	if got, want := stdout.String(), "hello\nfrom stdin\n"; got != want {
		t.Errorf("stdout = %q, want %q", got, want)
	}
	if got := stderr.String(); got != "oops\n" {
		t.Errorf("stderr = %q, want %q", got, "oops\n")
	}
}

func TestSignalReachesProcessGroup(t *testing.T) {
	s := Start(t, nil)
	sess, err := s.Dial(t).NewSession()
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	stdout, err := sess.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	// The child sleep shares the group; TERM must end both.
	if err := sess.Start(`sleep 30 & echo started; wait`); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, len("started\n"))
	if _, err := stdout.Read(buf); err != nil {
		t.Fatal(err)
	}
	if err := sess.Signal(ssh.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- sess.Wait() }()
	select {
	case err := <-done:
		var exitErr *ssh.ExitError
		if !errors.As(err, &exitErr) || exitErr.Signal() != string(ssh.SIGTERM) {
			t.Fatalf("Wait = %v, want exit by TERM", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("command did not end after SIGTERM")
	}
}

func TestSFTPServesLocalFiles(t *testing.T) {
	s := Start(t, nil)
	client, err := sftp.NewClient(s.Dial(t))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	p := filepath.Join(t.TempDir(), "f.txt")
	if err := os.WriteFile(p, []byte("local bytes"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := client.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var buf bytes.Buffer
	if _, err := f.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	if buf.String() != "local bytes" {
		t.Fatalf("read %q", buf.String())
	}
}

func TestDropConnectionsEndsClientsButKeepsServing(t *testing.T) {
	s := Start(t, nil)
	c := s.Dial(t)
	s.DropConnections()
	done := make(chan struct{})
	go func() { _ = c.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("client still alive after DropConnections")
	}
	s.Dial(t)
	if s.Accepted() != 2 {
		t.Fatalf("Accepted = %d, want 2", s.Accepted())
	}
}

func TestKnownHostsFileAndKeyFileAuthenticate(t *testing.T) {
	s := Start(t, &Options{Password: "pw"})
	check, err := knownhosts.New(s.KnownHostsFile)
	if err != nil {
		t.Fatal(err)
	}
	pemBytes, err := os.ReadFile(s.UserKeyFile)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := ssh.ParsePrivateKey(pemBytes)
	if err != nil {
		t.Fatal(err)
	}
	for name, auth := range map[string]ssh.AuthMethod{
		"key":      ssh.PublicKeys(signer),
		"password": ssh.Password("pw"),
	} {
		c, err := ssh.Dial("tcp", s.Addr, &ssh.ClientConfig{User: s.User, Auth: []ssh.AuthMethod{auth}, HostKeyCallback: check})
		if err != nil {
			t.Fatalf("%s login: %v", name, err)
		}
		c.Close()
	}
	_, err = ssh.Dial("tcp", s.Addr, &ssh.ClientConfig{User: s.User, Auth: []ssh.AuthMethod{ssh.Password("wrong")}, HostKeyCallback: check})
	if err == nil {
		t.Fatal("wrong password accepted")
	}
}

func TestIgnoreGlobalRequestsLeavesKeepaliveUnanswered(t *testing.T) {
	s := Start(t, &Options{IgnoreGlobalRequests: true})
	c := s.Dial(t)
	replied := make(chan struct{})
	go func() {
		_, _, _ = c.SendRequest("keepalive@openssh.com", true, nil)
		close(replied)
	}()
	select {
	case <-replied:
		t.Fatal("keepalive answered")
	case <-time.After(50 * time.Millisecond):
	}
	c.Close()
	<-replied
}

func TestCloseKillsRunningCommands(t *testing.T) {
	s, err := New(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := ssh.Dial("tcp", s.Addr, s.ClientConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sess, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	if err := sess.Start("sleep 60"); err != nil {
		t.Fatal(err)
	}
	closed := make(chan struct{})
	go func() { _ = s.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("Close hung on a running command")
	}
}
