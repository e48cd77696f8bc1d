// Package sshtest runs an in-process SSH server for tests: public-key (and
// optionally password) login, the SFTP subsystem over the real local file
// system, and exec channels that run `sh -c` locally with environment
// requests, stdin/stdout/stderr, exit status and signals to the process
// group. Everything it starts ends on Close.
package sshtest

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"

	"github.com/pkg/sftp"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// Options adjusts a Server. The zero value gives key login only.
type Options struct {
	// Password, when set, is accepted for User as well as the key.
	Password string
	// IgnoreGlobalRequests leaves global requests (such as keepalives)
	// unanswered, to test a peer that stopped responding.
	IgnoreGlobalRequests bool
}

// Server is a running in-process SSH server on 127.0.0.1.
type Server struct {
	// Addr is "127.0.0.1:port".
	Addr string
	// User is the login name the server accepts.
	User string
	// HostKey is the server's public host key.
	HostKey ssh.PublicKey
	// UserSigner is the client key the server accepts.
	UserSigner ssh.Signer
	// UserKeyFile holds UserSigner's private key in OpenSSH format.
	UserKeyFile string
	// KnownHostsFile lists HostKey for Addr.
	KnownHostsFile string

	opts     Options
	listener net.Listener
	config   *ssh.ServerConfig

	mu       sync.Mutex
	conns    map[net.Conn]bool
	procs    map[*exec.Cmd]bool
	accepted int
	sftpOpen int // SFTP sessions opened in all
	sftpLive int // SFTP sessions still served
	closed   bool

	wg sync.WaitGroup
}

// Start starts a server with fresh keys and closes it when the test ends.
// opts may be nil.
func Start(tb testing.TB, opts *Options) *Server {
	tb.Helper()
	s, err := New(tb.TempDir(), opts)
	if err != nil {
		tb.Fatalf("sshtest: %v", err)
	}
	tb.Cleanup(func() { _ = s.Close() })
	return s
}

// New starts a server with fresh keys, writing its key and known_hosts files
// into dir. The caller must Close it.
func New(dir string, opts *Options) (*Server, error) {
	s := &Server{User: "tester", conns: make(map[net.Conn]bool), procs: make(map[*exec.Cmd]bool)}
	if opts != nil {
		s.opts = *opts
	}
	hostSigner, _, err := newKey()
	if err != nil {
		return nil, err
	}
	userSigner, userPEM, err := newKey()
	if err != nil {
		return nil, err
	}
	s.HostKey, s.UserSigner = hostSigner.PublicKey(), userSigner
	s.config = &ssh.ServerConfig{
		PublicKeyCallback: func(meta ssh.ConnMetadata, key ssh.PublicKey) (*ssh.Permissions, error) {
			if meta.User() == s.User && string(key.Marshal()) == string(userSigner.PublicKey().Marshal()) {
				return &ssh.Permissions{}, nil
			}
			return nil, fmt.Errorf("sshtest: key refused for %q", meta.User())
		},
	}
	if s.opts.Password != "" {
		s.config.PasswordCallback = func(meta ssh.ConnMetadata, pw []byte) (*ssh.Permissions, error) {
			if meta.User() == s.User && string(pw) == s.opts.Password {
				return &ssh.Permissions{}, nil
			}
			return nil, fmt.Errorf("sshtest: password refused for %q", meta.User())
		}
	}
	s.config.AddHostKey(hostSigner)

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s.listener, s.Addr = l, l.Addr().String()
	s.UserKeyFile = filepath.Join(dir, "id_ed25519")
	s.KnownHostsFile = filepath.Join(dir, "known_hosts")
	if err := os.WriteFile(s.UserKeyFile, userPEM, 0o600); err != nil {
		l.Close()
		return nil, err
	}
	if err := os.WriteFile(s.KnownHostsFile, []byte(s.KnownHostsLine()+"\n"), 0o600); err != nil {
		l.Close()
		return nil, err
	}
	s.wg.Add(1)
	go s.acceptLoop()
	return s, nil
}

func newKey() (ssh.Signer, []byte, error) {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	signer, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		return nil, nil, err
	}
	block, err := ssh.MarshalPrivateKey(priv, "sshtest")
	if err != nil {
		return nil, nil, err
	}
	return signer, pem.EncodeToMemory(block), nil
}

// KnownHostsLine is the known_hosts line for this server's address and key.
func (s *Server) KnownHostsLine() string {
	return knownhosts.Line([]string{knownhosts.Normalize(s.Addr)}, s.HostKey)
}

// ClientConfig logs in as User with UserSigner and accepts only HostKey.
func (s *Server) ClientConfig() *ssh.ClientConfig {
	return &ssh.ClientConfig{
		User:            s.User,
		Auth:            []ssh.AuthMethod{ssh.PublicKeys(s.UserSigner)},
		HostKeyCallback: ssh.FixedHostKey(s.HostKey),
	}
}

// Dial returns a connected client that is closed when the test ends.
func (s *Server) Dial(tb testing.TB) *ssh.Client {
	tb.Helper()
	c, err := ssh.Dial("tcp", s.Addr, s.ClientConfig())
	if err != nil {
		tb.Fatalf("sshtest: dial: %v", err)
	}
	tb.Cleanup(func() { _ = c.Close() })
	return c
}

// Accepted counts the connections accepted so far.
func (s *Server) Accepted() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.accepted
}

// SFTPSessions counts the SFTP sessions (subsystem requests) opened so
// far, and those still being served.
func (s *Server) SFTPSessions() (opened, live int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sftpOpen, s.sftpLive
}

// DropConnections cuts every open connection, as a server restart or a
// network failure would; the server keeps accepting new ones.
func (s *Server) DropConnections() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.conns {
		_ = c.Close()
	}
}

// Close stops listening, cuts every connection, kills running commands and
// waits for all of the server's goroutines.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	err := s.listener.Close()
	for c := range s.conns {
		_ = c.Close()
	}
	for cmd := range s.procs {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	s.mu.Unlock()
	s.wg.Wait()
	return err
}

func (s *Server) acceptLoop() {
	defer s.wg.Done()
	for {
		conn, err := s.listener.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			_ = conn.Close()
			return
		}
		s.conns[conn] = true
		s.accepted++
		s.wg.Add(1)
		s.mu.Unlock()
		go s.serveConn(conn)
	}
}

func (s *Server) serveConn(conn net.Conn) {
	defer s.wg.Done()
	defer func() {
		s.mu.Lock()
		delete(s.conns, conn)
		s.mu.Unlock()
		_ = conn.Close()
	}()
	sconn, chans, reqs, err := ssh.NewServerConn(conn, s.config)
	if err != nil {
		return
	}
	defer sconn.Close()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for req := range reqs {
			if !s.opts.IgnoreGlobalRequests && req.WantReply {
				_ = req.Reply(false, nil)
			}
		}
	}()
	for newChan := range chans {
		if newChan.ChannelType() != "session" {
			_ = newChan.Reject(ssh.UnknownChannelType, "only session channels")
			continue
		}
		ch, chReqs, err := newChan.Accept()
		if err != nil {
			continue
		}
		s.wg.Add(1)
		go s.serveSession(ch, chReqs)
	}
}

// session is one session channel: the environment it was given and the
// command it runs.
type session struct {
	s   *Server
	ch  ssh.Channel
	env []string

	mu      sync.Mutex
	cmd     *exec.Cmd
	outputs []*os.File // read ends of the command's stdout and stderr
}

func (s *Server) serveSession(ch ssh.Channel, reqs <-chan *ssh.Request) {
	defer s.wg.Done()
	sess := &session{s: s, ch: ch}
	for req := range reqs {
		ok := sess.handle(req)
		if req.WantReply {
			_ = req.Reply(ok, nil)
		}
	}
	// The channel is gone (client closed it or the connection dropped):
	// whatever still runs for it is killed, as sshd hangs up on it.
	sess.signal(syscall.SIGKILL)
	sess.closeOutputs()
	_ = ch.Close()
}

func (sess *session) handle(req *ssh.Request) bool {
	switch req.Type {
	case "env":
		var kv struct{ Name, Value string }
		if ssh.Unmarshal(req.Payload, &kv) != nil {
			return false
		}
		sess.env = append(sess.env, kv.Name+"="+kv.Value)
		return true
	case "exec":
		var p struct{ Command string }
		if ssh.Unmarshal(req.Payload, &p) != nil {
			return false
		}
		return sess.start(p.Command) == nil
	case "subsystem":
		var p struct{ Name string }
		if ssh.Unmarshal(req.Payload, &p) != nil || p.Name != "sftp" {
			return false
		}
		server, err := sftp.NewServer(sess.ch)
		if err != nil {
			return false
		}
		s := sess.s
		s.mu.Lock()
		s.sftpOpen++
		s.sftpLive++
		s.mu.Unlock()
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			_ = server.Serve()
			_ = server.Close()
			s.mu.Lock()
			s.sftpLive--
			s.mu.Unlock()
		}()
		return true
	case "signal":
		var p struct{ Signal string }
		if ssh.Unmarshal(req.Payload, &p) != nil {
			return false
		}
		sig, ok := signals[ssh.Signal(p.Signal)]
		if !ok {
			return false
		}
		return sess.signal(sig)
	}
	return false
}

var signals = map[ssh.Signal]syscall.Signal{
	ssh.SIGABRT: syscall.SIGABRT, ssh.SIGALRM: syscall.SIGALRM, ssh.SIGFPE: syscall.SIGFPE,
	ssh.SIGHUP: syscall.SIGHUP, ssh.SIGILL: syscall.SIGILL, ssh.SIGINT: syscall.SIGINT,
	ssh.SIGKILL: syscall.SIGKILL, ssh.SIGPIPE: syscall.SIGPIPE, ssh.SIGQUIT: syscall.SIGQUIT,
	ssh.SIGSEGV: syscall.SIGSEGV, ssh.SIGTERM: syscall.SIGTERM, ssh.SIGUSR1: syscall.SIGUSR1,
	ssh.SIGUSR2: syscall.SIGUSR2,
}

var signalNames = func() map[syscall.Signal]ssh.Signal {
	m := make(map[syscall.Signal]ssh.Signal, len(signals))
	for name, sig := range signals {
		m[sig] = name
	}
	return m
}()

// start runs command with `sh -c` in its own process group, wired to the
// channel, and reports its exit to the client when it ends. As sshd does,
// the exit status goes out when the command exits, and the channel closes
// only once its output has ended (or the client closed the channel): a
// descendant holding the output open delays the close, not the status.
func (sess *session) start(command string) error {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	if sess.cmd != nil {
		return errors.New("sshtest: session already runs a command")
	}
	cmd := exec.Command("sh", "-c", command)
	cmd.Env = append(os.Environ(), sess.env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		return err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return err
	}
	cmd.Stdout, cmd.Stderr = outW, errW
	sess.outputs = []*os.File{outR, errR}
	s := sess.s
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		closeFiles(outR, outW, errR, errW)
		return errors.New("sshtest: server closed")
	}
	err = cmd.Start()
	outW.Close()
	errW.Close()
	if err != nil {
		s.mu.Unlock()
		closeFiles(outR, errR)
		return err
	}
	s.procs[cmd] = true
	s.wg.Add(2)
	s.mu.Unlock()
	sess.cmd = cmd

	go func() {
		defer s.wg.Done()
		_, _ = io.Copy(stdin, sess.ch)
		_ = stdin.Close()
	}()
	go func() {
		defer s.wg.Done()
		var copies sync.WaitGroup
		copies.Add(2)
		go func() { defer copies.Done(); _, _ = io.Copy(sess.ch, outR) }()
		go func() { defer copies.Done(); _, _ = io.Copy(sess.ch.Stderr(), errR) }()
		err := cmd.Wait()
		s.mu.Lock()
		delete(s.procs, cmd)
		s.mu.Unlock()
		sess.reportExit(cmd, err)
		copies.Wait()
		closeFiles(outR, errR)
		_ = sess.ch.CloseWrite()
		_ = sess.ch.Close()
	}()
	return nil
}

// closeOutputs closes the read ends of the command's output, so copying
// it to a channel that is gone ends.
func (sess *session) closeOutputs() {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	closeFiles(sess.outputs...)
}

func closeFiles(files ...*os.File) {
	for _, f := range files {
		f.Close()
	}
}

func (sess *session) reportExit(cmd *exec.Cmd, err error) {
	status, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if ok && status.Signaled() {
		name, known := signalNames[status.Signal()]
		if !known {
			name = ssh.Signal(status.Signal().String())
		}
		payload := ssh.Marshal(struct {
			Signal     string
			CoreDumped bool
			Error      string
			Lang       string
		}{Signal: string(name)})
		_, _ = sess.ch.SendRequest("exit-signal", false, payload)
		return
	}
	code := 0
	if err != nil {
		code = cmd.ProcessState.ExitCode()
		if code < 0 {
			code = 255
		}
	}
	_, _ = sess.ch.SendRequest("exit-status", false, ssh.Marshal(struct{ Status uint32 }{uint32(code)}))
}

// signal sends sig to the command's process group, if one runs.
func (sess *session) signal(sig syscall.Signal) bool {
	sess.mu.Lock()
	cmd := sess.cmd
	sess.mu.Unlock()
	if cmd == nil || cmd.Process == nil {
		return false
	}
	sess.s.mu.Lock()
	running := sess.s.procs[cmd]
	sess.s.mu.Unlock()
	if !running {
		return false
	}
	return syscall.Kill(-cmd.Process.Pid, sig) == nil
}
