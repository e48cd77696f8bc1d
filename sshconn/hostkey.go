package sshconn

import (
	"bufio"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/crypto/ssh"
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

// hostKeyCallback returns the verifier, and the plain known_hosts check
// when the verifier is built from known_hosts files.
func (cfg Config) hostKeyCallback() (verify, known ssh.HostKeyCallback, err error) {
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
