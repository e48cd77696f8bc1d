package sshconn

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"
)

// Defaults used when the matching Config field is zero.
const (
	DefaultDialTimeout       = 15 * time.Second
	DefaultKeepaliveInterval = 15 * time.Second
)

// Config says how to authenticate to SSH hosts and verify them; the
// Destination says which host. The zero value is usable: it tries the keys
// of a running ssh-agent and verifies hosts against ~/.ssh/known_hosts.
// One Config serves every host of a pool.
type Config struct {
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

// Dial connects and authenticates to dest with cfg, verifies the host key and
// starts keepalives, which end when the client closes. ctx bounds the
// connect and handshake only. A problem with the host key or the
// known_hosts files is an ErrHostKey. Errors about local files (keys,
// known_hosts) name the file but do not satisfy fs.ErrNotExist, so they
// cannot be mistaken for a missing path on the host.
func Dial(ctx context.Context, dest Destination, cfg Config) (*ssh.Client, error) {
	addr := dest.Addr()
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
		User:            dest.User,
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

func (cfg Config) keepaliveInterval() time.Duration {
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

func (cfg Config) authMethods() ([]ssh.AuthMethod, func(), error) {
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
