// Package sshconn is acphost's one home for SSH connections: the one
// destination type (Destination, "user@host:port"), dialling with host-key
// verification (Dial and its Config), and the connection that is dialled
// again after it dies (Conn), which an SFTP root and agents launched on
// the host share.
//
// It hands out golang.org/x/crypto/ssh's own *ssh.Client, and the packages
// that use a connection take that type at their seam (fsroot.NewSFTP,
// fsroot.NewSFTPConn, acpclient.SSHTransport), so an app that already has
// a client passes it in and never needs this package.
//
// # Verifying the host
//
// The host key is always verified: against known_hosts files (by default
// ~/.ssh/known_hosts), or by a Config.HostKeyCallback; only
// Config.InsecureIgnoreHostKey skips it. An unknown host (ErrUnknownHost)
// and a changed key (ErrHostKeyChanged) are refused with different
// messages that say what was offered and what to do, and a missing,
// unreadable or malformed known_hosts file is refused too; all of them
// satisfy errors.Is(err, ErrHostKey) and name the file, and none of them
// satisfies fs.ErrNotExist, so a missing known_hosts never reads as a
// missing directory on the host. The server is asked for the key types
// known_hosts holds for it, so a host that prefers another type does not
// look changed.
//
// # Keys and liveness
//
// Dial offers the keys of Config.KeyFiles and Config.Signers and those of a
// running ssh-agent. It sends keepalive@openssh.com at
// Config.KeepaliveInterval and closes a client whose previous keepalive is
// still unanswered, so a silently dead peer is noticed within two
// intervals; Conn then dials again on its next use.
//
// Ciphers, MACs and key exchanges are x/crypto/ssh's defaults: its first
// cipher, aes128-gcm@openssh.com, was the fastest through a real sshd on
// an AES-NI CPU (BenchmarkCipher), ahead of OpenSSH's own first choice,
// chacha20-poly1305@openssh.com.
package sshconn
