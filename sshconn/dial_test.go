package sshconn

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acphost/acphost/internal/sshtest"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"
	"golang.org/x/crypto/ssh/knownhosts"
)

func TestParseDestination(t *testing.T) {
	cases := []struct {
		in, user, addr string
		bad            bool
	}{
		{in: "root@example.com:2222", user: "root", addr: "example.com:2222"},
		{in: "me@host", user: "me", addr: "host:22"},
		{in: "host:22", addr: "host:22"},
		{in: "root@[::1]:2200", user: "root", addr: "[::1]:2200"},
		{in: "root@", bad: true},
		{in: "root@host:99999", bad: true},
	}
	for _, tc := range cases {
		d, err := Parse(tc.in)
		if tc.bad {
			if err == nil {
				t.Errorf("%q: no error", tc.in)
			}
			continue
		}
		if err != nil || d.User != tc.user || d.Addr() != tc.addr {
			t.Errorf("%q = %q, %q, %v; want %q, %q", tc.in, d.User, d.Addr(), err, tc.user, tc.addr)
		}
		if back, err := Parse(d.String()); err != nil || back != d {
			t.Errorf("%q: String %q reads back as %+v, %v", tc.in, d, back, err)
		}
	}
}

// destination returns where a test server listens, with its login.
func destination(t testing.TB, srv *sshtest.Server) Destination {
	d, err := Parse(srv.User + "@" + srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// dialConfig authenticates with the test server's key file and verifies
// it against its known_hosts file.
func dialConfig(srv *sshtest.Server) Config {
	return Config{KeyFiles: []string{srv.UserKeyFile}, KnownHostsFiles: []string{srv.KnownHostsFile}, NoAgent: true}
}

func TestDialVerifiesKnownHosts(t *testing.T) {
	srv := sshtest.Start(t, nil)
	dir := t.TempDir()

	client, err := Dial(ctx, destination(t, srv), dialConfig(srv))
	if err != nil {
		t.Fatalf("known host: %v", err)
	}
	client.Close()

	empty := filepath.Join(dir, "empty_known_hosts")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := dialConfig(srv)
	cfg.KnownHostsFiles = []string{empty}
	_, err = Dial(ctx, destination(t, srv), cfg)
	if !errors.Is(err, ErrUnknownHost) || !strings.Contains(err.Error(), "unknown") || errors.Is(err, ErrHostKeyChanged) {
		t.Fatalf("unknown host: %v", err)
	}

	// A different key recorded for the same address: a changed key.
	_, otherPriv, _ := ed25519.GenerateKey(rand.Reader)
	otherSigner, _ := ssh.NewSignerFromKey(otherPriv)
	line := knownhosts.Line([]string{knownhosts.Normalize(srv.Addr)}, otherSigner.PublicKey())
	changed := filepath.Join(dir, "changed_known_hosts")
	if err := os.WriteFile(changed, []byte("# comment\n"+line+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg.KnownHostsFiles = []string{changed}
	_, err = Dial(ctx, destination(t, srv), cfg)
	if !errors.Is(err, ErrHostKeyChanged) {
		t.Fatalf("changed key: %v", err)
	}
	for _, want := range []string{"has changed", changed + ":2", line} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not contain %q", err, want)
		}
	}

	// Only an explicit opt-in skips verification.
	cfg.KnownHostsFiles = []string{empty}
	cfg.InsecureIgnoreHostKey = true
	client, err = Dial(ctx, destination(t, srv), cfg)
	if err != nil {
		t.Fatalf("insecure: %v", err)
	}
	client.Close()
}

func TestDialWithAgent(t *testing.T) {
	srv := sshtest.Start(t, nil)
	keyring := agent.NewKeyring()
	pemBytes, err := os.ReadFile(srv.UserKeyFile)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := ssh.ParseRawPrivateKey(pemBytes)
	if err != nil {
		t.Fatal(err)
	}
	if err := keyring.Add(agent.AddedKey{PrivateKey: raw}); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(t.TempDir(), "agent.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan struct{})
	go func() {
		defer close(served)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			_ = agent.ServeAgent(keyring, c)
			c.Close()
		}
	}()
	defer func() { l.Close(); <-served }()

	cfg := Config{KnownHostsFiles: []string{srv.KnownHostsFile}, AgentSocket: sock}
	client, err := Dial(ctx, destination(t, srv), cfg)
	if err != nil {
		t.Fatalf("agent login: %v", err)
	}
	client.Close()

	cfg.NoAgent = true
	if _, err := Dial(ctx, destination(t, srv), cfg); err == nil || !strings.Contains(err.Error(), "no keys") {
		t.Fatalf("without agent or keys: %v", err)
	}
}

func TestDialHonoursContext(t *testing.T) {
	// A listener that accepts but never speaks SSH.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := l.Accept()
		if err == nil {
			accepted <- c
		}
		close(accepted)
	}()
	dctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	_, err = Dial(dctx, Destination{User: "u", Host: "127.0.0.1", Port: l.Addr().(*net.TCPAddr).Port}, Config{InsecureIgnoreHostKey: true, Signers: []ssh.Signer{mustSigner(t)}})
	if err == nil {
		t.Fatal("dial to a silent server succeeded")
	}
	l.Close()
	for c := range accepted {
		c.Close()
	}
}

func mustSigner(t *testing.T) ssh.Signer {
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	s, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestKeepaliveClosesClientWhenUnanswered(t *testing.T) {
	srv := sshtest.Start(t, &sshtest.Options{IgnoreGlobalRequests: true})
	ticks := make(manualTicker)
	cfg := dialConfig(srv)
	cfg.keepaliveTicker = ticks.newTicker
	client, err := Dial(ctx, destination(t, srv), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	waited := make(chan struct{})
	go func() { _ = client.Wait(); close(waited) }()
	ticks.tick(t) // sends a keepalive
	select {
	case <-waited:
		t.Fatal("closed before a reply was due")
	default:
	}
	ticks.tick(t) // still unanswered: the client is closed
	select {
	case <-waited:
	case <-time.After(10 * time.Second):
		t.Fatal("client still open after a missed keepalive")
	}
}

func TestKeepaliveKeepsAnsweredClient(t *testing.T) {
	srv := sshtest.Start(t, nil)
	ticks := make(manualTicker)
	answered := make(chan struct{}, 1)
	cfg := dialConfig(srv)
	cfg.keepaliveTicker = ticks.newTicker
	cfg.keepaliveAnswered = func() { answered <- struct{}{} }
	client, err := Dial(ctx, destination(t, srv), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	for range 3 {
		ticks.tick(t)
		select {
		case <-answered:
		case <-time.After(10 * time.Second):
			t.Fatal("keepalive not answered")
		}
	}
	ticks.tick(t)
	if _, _, err := client.SendRequest("probe", true, nil); err != nil {
		t.Fatalf("answered client was closed: %v", err)
	}
}
