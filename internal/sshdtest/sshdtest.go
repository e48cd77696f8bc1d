// Package sshdtest runs a real OpenSSH sshd on 127.0.0.1 for integration
// tests: a free high port, a host key and a user key made for the run, and
// a configuration in a temporary directory that allows only key login for
// the current user, with the machine's sftp-server as the SFTP subsystem.
// Tests are skipped when sshd is not installed.
//
// sshd runs every command through the login user's shell, which reads that
// user's startup files (bash run by sshd reads ~/.bashrc, zsh ~/.zshenv):
// a slow one there would slow or stall every test. So the login gets a
// HOME of the test's own (Server.Home), whose startup files are empty
// unless the test writes them (SetStartup), and sshd runs no ~/.ssh/rc.
// The system's files (/etc/bash.bashrc and the like) are still read.
package sshdtest

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// Server is a running sshd.
type Server struct {
	// Addr is "127.0.0.1:port"; Port is its port.
	Addr string
	Port int
	// User is the login name (the user running the test).
	User string
	// Signer is the user key sshd accepts; KeyFile holds it in OpenSSH
	// format for command-line clients.
	Signer  ssh.Signer
	KeyFile string
	// HostKey is sshd's host key, KnownHostsLine its known_hosts line and
	// KnownHostsFile a file holding that line.
	HostKey        ssh.PublicKey
	KnownHostsLine string
	KnownHostsFile string
	// SFTPServer is the path of the sftp-server binary sshd runs.
	SFTPServer string
	// Home is the login's HOME, a fresh directory of the test's: the
	// login shell reads its startup files from there, not from the
	// user's own home.
	Home string

	cmd    *exec.Cmd
	stderr *syncBuffer
	exited chan struct{}
}

// Start runs sshd for the test and stops it when the test ends. It skips
// the test when sshd or sftp-server is not installed.
func Start(tb testing.TB) *Server {
	tb.Helper()
	sshd := findBinary("sshd", "/usr/sbin/sshd", "/usr/local/sbin/sshd")
	if sshd == "" {
		tb.Skip("sshdtest: OpenSSH sshd is not installed (apt-get install openssh-server); skipping real-sshd test")
	}
	sftpServer := findBinary("sftp-server", "/usr/lib/openssh/sftp-server", "/usr/libexec/openssh/sftp-server",
		"/usr/libexec/sftp-server", "/usr/lib/ssh/sftp-server")
	if sftpServer == "" {
		tb.Skip("sshdtest: sftp-server is not installed (apt-get install openssh-server); skipping real-sshd test")
	}
	u, err := user.Current()
	if err != nil {
		tb.Fatalf("sshdtest: current user: %v", err)
	}
	// sshd running as root insists on its privilege separation directory.
	if os.Geteuid() == 0 {
		if err := os.MkdirAll("/run/sshd", 0o755); err != nil {
			tb.Fatalf("sshdtest: %v", err)
		}
	}
	dir := tb.TempDir()
	s := &Server{User: u.Username, SFTPServer: sftpServer, Home: filepath.Join(dir, "home")}
	if err := s.writeKeys(dir); err != nil {
		tb.Fatalf("sshdtest: %v", err)
	}
	if err := os.Mkdir(s.Home, 0o700); err != nil {
		tb.Fatalf("sshdtest: %v", err)
	}
	if err := s.writeStartup(""); err != nil {
		tb.Fatalf("sshdtest: %v", err)
	}
	// A port picked by the kernel may be taken again before sshd binds it;
	// a few tries make that race harmless.
	var lastErr error
	for range 5 {
		if lastErr = s.start(sshd, dir); lastErr == nil {
			tb.Cleanup(func() {
				if err := s.stop(); err != nil {
					tb.Errorf("sshdtest: %v", err)
				}
			})
			return s
		}
	}
	tb.Fatalf("sshdtest: %v", lastErr)
	return nil
}

func findBinary(name string, candidates ...string) string {
	if p, err := exec.LookPath(name); err == nil {
		if abs, err := filepath.Abs(p); err == nil {
			return abs
		}
	}
	for _, p := range candidates {
		if info, err := os.Stat(p); err == nil && !info.IsDir() {
			return p
		}
	}
	return ""
}

func (s *Server) writeKeys(dir string) error {
	hostPub, hostPEM, err := newKey()
	if err != nil {
		return err
	}
	userPub, userPEM, err := newKey()
	if err != nil {
		return err
	}
	s.HostKey = hostPub
	s.Signer, err = ssh.ParsePrivateKey(userPEM)
	if err != nil {
		return err
	}
	s.KeyFile = filepath.Join(dir, "id_ed25519")
	files := map[string][]byte{
		"host_ed25519":    hostPEM,
		"id_ed25519":      userPEM,
		"authorized_keys": ssh.MarshalAuthorizedKey(userPub),
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			return err
		}
	}
	return nil
}

func newKey() (ssh.PublicKey, []byte, error) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	sshPub, err := ssh.NewPublicKey(pub)
	if err != nil {
		return nil, nil, err
	}
	block, err := ssh.MarshalPrivateKey(priv, "sshdtest")
	if err != nil {
		return nil, nil, err
	}
	return sshPub, pem.EncodeToMemory(block), nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func (s *Server) start(sshd, dir string) error {
	port, err := freePort()
	if err != nil {
		return err
	}
	s.Port = port
	s.Addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	s.KnownHostsLine = knownhosts.Line([]string{knownhosts.Normalize(s.Addr)}, s.HostKey)
	s.KnownHostsFile = filepath.Join(dir, "known_hosts")
	if err := os.WriteFile(s.KnownHostsFile, []byte(s.KnownHostsLine+"\n"), 0o600); err != nil {
		return err
	}
	config := strings.Join([]string{
		"ListenAddress 127.0.0.1:" + strconv.Itoa(port),
		"HostKey " + filepath.Join(dir, "host_ed25519"),
		"PidFile " + filepath.Join(dir, "sshd.pid"),
		"AuthorizedKeysFile " + filepath.Join(dir, "authorized_keys"),
		"AllowUsers " + s.User,
		"PermitRootLogin prohibit-password",
		"PubkeyAuthentication yes",
		"PasswordAuthentication no",
		"KbdInteractiveAuthentication no",
		"UsePAM no",
		"StrictModes no",
		"PermitUserEnvironment no",
		"PermitUserRC no",
		// After sshd has set HOME from the password database: the
		// login shell then reads the test's startup files.
		"SetEnv HOME=" + s.Home,
		"AcceptEnv *",
		"Subsystem sftp " + s.SFTPServer,
		"LogLevel ERROR",
		"",
	}, "\n")
	cfgFile := filepath.Join(dir, "sshd_config")
	if err := os.WriteFile(cfgFile, []byte(config), 0o600); err != nil {
		return err
	}
	s.stderr = &syncBuffer{}
	s.cmd = exec.Command(sshd, "-f", cfgFile, "-D", "-e")
	s.cmd.Stdout = s.stderr
	s.cmd.Stderr = s.stderr
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// A session's processes leave sshd's process group (setsid) and may
	// hold its output open after it ended: Wait must not wait for them.
	s.cmd.WaitDelay = 2 * time.Second
	if err := s.cmd.Start(); err != nil {
		return fmt.Errorf("start sshd: %w", err)
	}
	s.exited = make(chan struct{})
	go func() {
		_ = s.cmd.Wait()
		close(s.exited)
	}()
	if err := s.waitReady(10 * time.Second); err != nil {
		_ = s.stop()
		return fmt.Errorf("sshd on port %d: %w; sshd said: %s", port, err, strings.TrimSpace(s.stderr.String()))
	}
	return nil
}

// waitReady polls until sshd sends its version banner.
func (s *Server) waitReady(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for delay := 5 * time.Millisecond; ; delay = min(delay*2, 200*time.Millisecond) {
		select {
		case <-s.exited:
			return errors.New("sshd exited")
		default:
		}
		conn, err := net.DialTimeout("tcp", s.Addr, time.Second)
		if err == nil {
			_ = conn.SetReadDeadline(time.Now().Add(2 * time.Second))
			banner := make([]byte, 4)
			_, err = conn.Read(banner)
			conn.Close()
			if err == nil && string(banner) == "SSH-" {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not ready after %v: %v", timeout, err)
		}
		time.Sleep(delay)
	}
}

// stop ends sshd and every session process it started, bounded.
func (s *Server) stop() error {
	if s.cmd == nil || s.cmd.Process == nil {
		return nil
	}
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(5 * time.Second):
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		select {
		case <-s.exited:
		case <-time.After(10 * time.Second):
			return fmt.Errorf("sshd (pid %d) has not ended 10s after SIGKILL", s.cmd.Process.Pid)
		}
	}
	return nil
}

// startupFiles are the files in HOME that the shells sshd may run a
// command with read at startup: bash run by sshd (~/.bashrc), zsh
// (~/.zshenv), and login shells for the rest.
var startupFiles = []string{".bashrc", ".bash_profile", ".profile", ".zshenv", ".zprofile", ".kshrc", ".mkshrc"}

// SetStartup makes every startup file of the login's shells in Home run
// script (sh syntax) from the next command on, as a user's ~/.bashrc
// would; "" makes them empty, as they are at Start. A test uses it to give
// the login a slow start.
func (s *Server) SetStartup(tb testing.TB, script string) {
	tb.Helper()
	if err := s.writeStartup(script); err != nil {
		tb.Fatalf("sshdtest: %v", err)
	}
}

func (s *Server) writeStartup(script string) error {
	for _, name := range startupFiles {
		if err := os.WriteFile(filepath.Join(s.Home, name), []byte(script), 0o600); err != nil {
			return err
		}
	}
	return nil
}

// HoldLogins makes every later login wait at startup, as a user's startup
// file waiting on a stale lock would: the login shell writes said on its
// stderr, then waits until release is called (at the latest when the test
// ends, and never more than a minute, so nothing it holds outlives the
// test for long).
func (s *Server) HoldLogins(tb testing.TB, said string) (release func()) {
	tb.Helper()
	flag := filepath.Join(tb.TempDir(), "released")
	s.SetStartup(tb, "echo "+shellQuote(said)+` >&2
i=0; while [ ! -e `+shellQuote(flag)+` ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done
`)
	release = func() { _ = os.WriteFile(flag, nil, 0o600) }
	tb.Cleanup(release)
	return release
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// ClientConfig logs in as User with Signer and accepts only HostKey.
func (s *Server) ClientConfig() *ssh.ClientConfig {
	return &ssh.ClientConfig{
		User:            s.User,
		Auth:            []ssh.AuthMethod{ssh.PublicKeys(s.Signer)},
		HostKeyCallback: ssh.FixedHostKey(s.HostKey),
	}
}

// Dial returns a connected client that is closed when the test ends. The
// connection and the handshake are bounded (a minute): a stuck sshd fails
// the test saying so.
func (s *Server) Dial(tb testing.TB) *ssh.Client {
	tb.Helper()
	const bound = time.Minute
	conn, err := net.DialTimeout("tcp", s.Addr, bound)
	if err != nil {
		tb.Fatalf("sshdtest: dial %s: %v; sshd said: %s", s.Addr, err, s.stderr.String())
	}
	_ = conn.SetDeadline(time.Now().Add(bound))
	cc, chans, reqs, err := ssh.NewClientConn(conn, s.Addr, s.ClientConfig())
	if err != nil {
		conn.Close()
		tb.Fatalf("sshdtest: SSH handshake with %s (bounded by %v): %v; sshd said: %s", s.Addr, bound, err, s.stderr.String())
	}
	_ = conn.SetDeadline(time.Time{})
	c := ssh.NewClient(cc, chans, reqs)
	tb.Cleanup(func() { _ = c.Close() })
	return c
}

// Log returns what sshd has written to stderr so far.
func (s *Server) Log() string { return s.stderr.String() }

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
