package fsroot

import (
	"bufio"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"
	"golang.org/x/crypto/ssh/knownhosts"
)

// Errors of host key verification, wrapped in the error Dial returns.
var (
	// ErrHostKey means the host's key could not be verified: a known_hosts
	// file is missing, unreadable or malformed, or the host is unknown, or
	// its key changed. ErrUnknownHost and ErrHostKeyChanged satisfy
	// errors.Is(err, ErrHostKey) too. The message names the known_hosts
	// file.
	ErrHostKey = errors.New("ssh host key cannot be verified")
	// ErrUnknownHost means the host has no entry in the known_hosts files.
	ErrUnknownHost error = hostKeyError("ssh host is unknown")
	// ErrHostKeyChanged means the host offered a key that differs from the
	// one its known_hosts entry records: a reinstall, or an attack.
	ErrHostKeyChanged error = hostKeyError("ssh host key has changed")
)

// hostKeyError is a kind of ErrHostKey with its own text.
type hostKeyError string

func (e hostKeyError) Error() string { return string(e) }

// Is makes every hostKeyError satisfy errors.Is(err, ErrHostKey).
func (e hostKeyError) Is(target error) bool { return target == ErrHostKey }

// Defaults used when the matching DialConfig field is zero.
const (
	DefaultDialTimeout       = 15 * time.Second
	DefaultKeepaliveInterval = 15 * time.Second
)

// DialConfig says how to reach and authenticate to an SSH host. The zero
// value plus User and Addr is usable: it tries the keys of a running
// ssh-agent and verifies the host against ~/.ssh/known_hosts.
type DialConfig struct {
	// User is the login name; Addr is "host:port" or "host" (port 22).
	// ParseDestination splits a "user@host:port" string into the two.
	User string
	Addr string
	// KeyFiles are private key files (unencrypted) to offer.
	KeyFiles []string
	// Signers are further keys to offer, e.g. from a key store.
	Signers []ssh.Signer
	// AgentSocket is the ssh-agent socket; "" means $SSH_AUTH_SOCK. With
	// NoAgent set no agent is asked.
	AgentSocket string
	NoAgent     bool
	// KnownHostsFiles verify the host key; nil means ~/.ssh/known_hosts.
	KnownHostsFiles []string
	// HostKeyCallback, when set, verifies the host key instead of the
	// known_hosts files.
	HostKeyCallback ssh.HostKeyCallback
	// InsecureIgnoreHostKey accepts any host key. Only for tests and
	// throw-away hosts; nothing else turns verification off.
	InsecureIgnoreHostKey bool
	// Timeout bounds the TCP connect and the SSH handshake
	// (0 = DefaultDialTimeout).
	Timeout time.Duration
	// KeepaliveInterval is how often a keepalive@openssh.com request is sent;
	// a request still unanswered at the next interval closes the client
	// (0 = DefaultKeepaliveInterval, negative = no keepalives).
	KeepaliveInterval time.Duration

	// Test seams: keepaliveTicker replaces the keepalive ticker and
	// keepaliveAnswered is called after each answered keepalive.
	keepaliveTicker   func(time.Duration) (<-chan time.Time, func())
	keepaliveAnswered func()
}

// ParseDestination splits "user@host:port", "user@host" or "host:port" into
// a user ("" when absent) and an address with a port (22 by default).
// IPv6 hosts are written in brackets: "root@[::1]:2222".
func ParseDestination(dest string) (user, addr string, err error) {
	hostport := dest
	if i := strings.LastIndex(dest, "@"); i >= 0 {
		user, hostport = dest[:i], dest[i+1:]
	}
	if hostport == "" {
		return "", "", fmt.Errorf("ssh destination %q has no host", dest)
	}
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		host, port = strings.Trim(hostport, "[]"), "22"
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil || host == "" {
		return "", "", fmt.Errorf("ssh destination %q: bad host or port", dest)
	}
	return user, net.JoinHostPort(host, port), nil
}

func (cfg DialConfig) addr() string {
	if _, _, err := net.SplitHostPort(cfg.Addr); err == nil {
		return cfg.Addr
	}
	return net.JoinHostPort(strings.Trim(cfg.Addr, "[]"), "22")
}

// Dial connects and authenticates to cfg.Addr, verifies the host key and
// starts keepalives, which end when the client closes. ctx bounds the
// connect and handshake only. A problem with the host key or the
// known_hosts files is an ErrHostKey. Errors about local files (keys,
// known_hosts) name the file but do not satisfy fs.ErrNotExist, so they
// cannot be mistaken for a missing path on the host.
func Dial(ctx context.Context, cfg DialConfig) (*ssh.Client, error) {
	addr := cfg.addr()
	dest := cfg.User + "@" + addr
	hostKeyCallback, known, err := cfg.hostKeyCallback()
	if err != nil {
		return nil, fmt.Errorf("ssh: dial %s: %w", dest, err)
	}
	auth, closeAgent, err := cfg.authMethods()
	if err != nil {
		return nil, fmt.Errorf("ssh: dial %s: %w", dest, err)
	}
	defer closeAgent()

	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = DefaultDialTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var dialer net.Dialer
	conn, err := dialer.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("ssh: dial %s: %w", dest, err)
	}
	// The handshake does not take a context: a deadline bounds it and a
	// cancelled ctx closes the socket under it.
	deadline, _ := ctx.Deadline()
	_ = conn.SetDeadline(deadline)
	stop := context.AfterFunc(ctx, func() { _ = conn.Close() })

	config := &ssh.ClientConfig{
		User:            cfg.User,
		Auth:            auth,
		HostKeyCallback: hostKeyCallback,
	}
	if known != nil {
		config.HostKeyAlgorithms = knownAlgorithms(known, addr)
	}
	c, chans, reqs, err := ssh.NewClientConn(conn, addr, config)
	if !stop() || err != nil {
		_ = conn.Close()
		if err == nil {
			err = ctx.Err()
			_ = c.Close()
		}
		return nil, fmt.Errorf("ssh: dial %s: %w", dest, err)
	}
	_ = conn.SetDeadline(time.Time{})
	client := ssh.NewClient(c, chans, reqs)
	if interval := cfg.keepaliveInterval(); interval > 0 {
		newTicker := cfg.keepaliveTicker
		if newTicker == nil {
			newTicker = realTicker
		}
		tick, stopTick := newTicker(interval)
		answered := cfg.keepaliveAnswered
		if answered == nil {
			answered = func() {}
		}
		go keepalive(client, tick, stopTick, answered)
	}
	return client, nil
}

func (cfg DialConfig) keepaliveInterval() time.Duration {
	if cfg.KeepaliveInterval == 0 {
		return DefaultKeepaliveInterval
	}
	return cfg.KeepaliveInterval
}

func realTicker(d time.Duration) (<-chan time.Time, func()) {
	t := time.NewTicker(d)
	return t.C, t.Stop
}

// keepalive sends keepalive@openssh.com on every tick and closes the client
// when the previous request is still unanswered, so a silently dead peer is
// noticed. Any reply, even a refusal, proves the peer alive. It returns when
// the client is closed.
func keepalive(client *ssh.Client, tick <-chan time.Time, stopTick, answered func()) {
	defer stopTick()
	closed := make(chan struct{})
	go func() {
		_ = client.Wait()
		close(closed)
	}()
	var outstanding chan error
	for {
		select {
		case <-closed:
			if outstanding != nil {
				<-outstanding
			}
			return
		case err := <-outstanding:
			outstanding = nil
			if err != nil {
				_ = client.Close()
				continue
			}
			answered()
		case <-tick:
			if outstanding != nil {
				select {
				case err := <-outstanding:
					// Answered just now; the tick raced the reply.
					outstanding = nil
					if err != nil {
						_ = client.Close()
						continue
					}
					answered()
				default:
					_ = client.Close()
					continue
				}
			}
			outstanding = make(chan error, 1)
			go func(result chan<- error) {
				_, _, err := client.SendRequest("keepalive@openssh.com", true, nil)
				result <- err
			}(outstanding)
		}
	}
}

func (cfg DialConfig) authMethods() ([]ssh.AuthMethod, func(), error) {
	signers := append([]ssh.Signer(nil), cfg.Signers...)
	for _, file := range cfg.KeyFiles {
		pem, err := os.ReadFile(file)
		if err != nil {
			return nil, nil, fmt.Errorf("read key file %s: %v", file, err)
		}
		signer, err := ssh.ParsePrivateKey(pem)
		if err != nil {
			return nil, nil, fmt.Errorf("key %s: %w", file, err)
		}
		signers = append(signers, signer)
	}
	closeAgent := func() {}
	socket := cfg.AgentSocket
	if socket == "" {
		socket = os.Getenv("SSH_AUTH_SOCK")
	}
	if !cfg.NoAgent && socket != "" {
		conn, err := net.Dial("unix", socket)
		if err == nil {
			closeAgent = func() { _ = conn.Close() }
			if agentSigners, err := agent.NewClient(conn).Signers(); err == nil {
				signers = append(signers, agentSigners...)
			}
		}
	}
	if len(signers) == 0 {
		closeAgent()
		return nil, nil, errors.New("no keys to authenticate with (no key files, signers or ssh-agent keys)")
	}
	return []ssh.AuthMethod{ssh.PublicKeys(signers...)}, closeAgent, nil
}

// hostKeyCallback returns the verifier, and the plain known_hosts check
// when the verifier is built from known_hosts files.
func (cfg DialConfig) hostKeyCallback() (verify, known ssh.HostKeyCallback, err error) {
	switch {
	case cfg.HostKeyCallback != nil:
		return cfg.HostKeyCallback, nil, nil
	case cfg.InsecureIgnoreHostKey:
		return ssh.InsecureIgnoreHostKey(), nil, nil
	}
	files := cfg.KnownHostsFiles
	if files == nil {
		home, err := os.UserHomeDir()
		if err != nil {
			return nil, nil, fmt.Errorf("find known_hosts: %w", err)
		}
		files = []string{filepath.Join(home, ".ssh", "known_hosts")}
	}
	for _, f := range files {
		if err := readableFile(f); err != nil {
			return nil, nil, fmt.Errorf("%w: known_hosts file %s cannot be read: %v", ErrHostKey, f, err)
		}
	}
	check, err := knownhosts.New(files...)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: known_hosts file: %v", ErrHostKey, err)
	}
	verify = func(hostname string, remote net.Addr, key ssh.PublicKey) error {
		err := check(hostname, remote, key)
		var keyErr *knownhosts.KeyError
		if !errors.As(err, &keyErr) {
			return err
		}
		offered := key.Type() + " " + ssh.FingerprintSHA256(key)
		if len(keyErr.Want) == 0 {
			return fmt.Errorf("%w: %s offered %s, which no line of %s lists; verify it and add it (e.g. with ssh-keyscan)",
				ErrUnknownHost, hostname, offered, strings.Join(files, ", "))
		}
		known := keyErr.Want[0]
		return fmt.Errorf("%w: %s offered %s, but %s:%d has %q; if the host was reinstalled, replace that line",
			ErrHostKeyChanged, hostname, offered, known.Filename, known.Line, knownHostsLine(known))
	}
	return verify, check, nil
}

// readableFile checks that name is a regular file this user can open.
func readableFile(name string) error {
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return err
	}
	if !info.Mode().IsRegular() {
		return fmt.Errorf("not a regular file (%s)", info.Mode().Type())
	}
	return nil
}

// knownHostsLine returns the text of the known_hosts line that recorded a
// key, or the key itself when the file cannot be re-read.
func knownHostsLine(k knownhosts.KnownKey) string {
	fallback := k.Key.Type() + " " + ssh.FingerprintSHA256(k.Key)
	f, err := os.Open(k.Filename)
	if err != nil {
		return fallback
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		if n == k.Line {
			return strings.TrimSpace(sc.Text())
		}
	}
	return fallback
}

// knownAlgorithms asks known_hosts which key types it holds for addr, so the
// server is asked for one of those; otherwise a host with an ed25519 entry
// that prefers to offer ECDSA would look like a changed key. It probes the
// callback with a throw-away key, whose mismatch lists the known keys.
func knownAlgorithms(check ssh.HostKeyCallback, addr string) []string {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil
	}
	probe, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		return nil
	}
	var keyErr *knownhosts.KeyError
	if !errors.As(check(addr, &net.TCPAddr{}, probe.PublicKey()), &keyErr) {
		return nil
	}
	var algos []string
	for _, k := range keyErr.Want {
		switch t := k.Key.Type(); t {
		case ssh.KeyAlgoRSA:
			algos = append(algos, ssh.KeyAlgoRSASHA512, ssh.KeyAlgoRSASHA256, ssh.KeyAlgoRSA)
		default:
			algos = append(algos, t)
		}
	}
	return algos
}
