package terminal

import (
	"fmt"
	"sync"

	"github.com/pkg/sftp"
	"golang.org/x/crypto/ssh"
)

// sftpSessions is the one SFTP client a bridge's SSH terminals resolve
// their directories with, on the connection they last used: opening an
// SFTP session costs round trips (0.3-1 s), and a terminal/create resolves
// several directories. It is opened again when the terminals' connection
// changes (a redial after a drop) or its session has ended, and closed with
// the bridge (Set.Close). Its zero value is ready.
type sftpSessions struct {
	mu     sync.Mutex
	conn   *ssh.Client
	client *sftp.Client
	ended  chan struct{} // closed once client's session is over
	closed bool
}

// get returns the SFTP client on conn, opening one if there is none on it
// or the last one's session has ended.
func (p *sftpSessions) get(conn *ssh.Client) (*sftp.Client, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, errClosed
	}
	if p.client != nil && p.conn == conn && !isClosed(p.ended) {
		return p.client, nil
	}
	p.closeLocked()
	c, err := sftp.NewClient(conn)
	if err != nil {
		return nil, fmt.Errorf("sftp on %s: %w", conn.RemoteAddr(), err)
	}
	ended := make(chan struct{})
	go func() { _ = c.Wait(); close(ended) }() // ends when c is closed or its connection goes
	p.conn, p.client, p.ended = conn, c, ended
	return c, nil
}

// close closes the client and refuses new ones.
func (p *sftpSessions) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	p.closeLocked()
}

// closeLocked closes the client, if any: it ends its side of the session,
// and the host ends the session. Nothing waits for the host here, so a
// host that stopped answering holds up no close. Called with p.mu held.
func (p *sftpSessions) closeLocked() {
	if p.client == nil {
		return
	}
	_ = p.client.Close()
	p.conn, p.client, p.ended = nil, nil, nil
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
