// Package sshflags turns the examples' --ssh, --ssh-key and
// --ssh-known-hosts flags into what sshconn dials with, the same way in
// every example.
package sshflags

import (
	"fmt"
	"os"
	"os/user"
	"path/filepath"

	"golang.org/x/crypto/ssh"

	"github.com/acphost/acphost/sshconn"
)

// Target reads user@host[:port]; the user defaults to the local one.
func Target(dest string) (sshconn.Destination, error) {
	d, err := sshconn.Parse(dest)
	if err != nil {
		return sshconn.Destination{}, err
	}
	if d.User == "" {
		u, err := user.Current()
		if err != nil {
			return sshconn.Destination{}, fmt.Errorf("no user given and the local one is unknown: %w", err)
		}
		d.User = u.Username
	}
	return d, nil
}

// DialConfig offers the key file given, or else the unencrypted default
// keys in ~/.ssh, besides those of a running ssh-agent. Host keys are
// verified against knownHosts, or ~/.ssh/known_hosts.
func DialConfig(keyFile, knownHosts string) (sshconn.Config, error) {
	var cfg sshconn.Config
	if knownHosts != "" {
		cfg.KnownHostsFiles = []string{knownHosts}
	}
	if keyFile != "" {
		cfg.KeyFiles = []string{keyFile}
		return cfg, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return cfg, nil
	}
	for _, name := range []string{"id_ed25519", "id_ecdsa", "id_rsa"} {
		pem, err := os.ReadFile(filepath.Join(home, ".ssh", name))
		if err != nil {
			continue
		}
		if signer, err := ssh.ParsePrivateKey(pem); err == nil {
			cfg.Signers = append(cfg.Signers, signer)
		}
	}
	return cfg, nil
}
