package sshconn

import (
	"context"
	"errors"
	"sync"

	"golang.org/x/crypto/ssh"
)

// ErrClosed is returned by Conn.Client after Close.
var ErrClosed = errors.New("ssh connection closed")

// Conn holds one SSH connection to a destination and replaces it when it
// dies: Client hands out the current *ssh.Client and dials a new one if the
// last has closed (server gone, keepalive missed). An SFTP root
// (fsroot.NewSFTPConn) and agents launched over SSH (acpclient.SSHTransport's
// Dial, given Client) can share one Conn, and so one connection.
type Conn struct {
	dest Destination
	cfg  Config
	dial func(context.Context, Destination, Config) (*ssh.Client, error)

	mu     sync.Mutex
	client *ssh.Client
	dead   chan struct{} // closed when client has ended
	closed bool
	// monitors counts the goroutines that wait for each client to end.
	monitors sync.WaitGroup
}

// New returns a connection to dest that dials with cfg on first use. It
// does not dial yet.
func New(dest Destination, cfg Config) *Conn {
	return &Conn{dest: dest, cfg: cfg, dial: Dial}
}

// Destination returns the host and login the connection dials.
func (c *Conn) Destination() Destination { return c.dest }

// Client returns a live client, dialling when there is none or the previous
// one has closed. Concurrent callers share one dial.
func (c *Conn) Client(ctx context.Context) (*ssh.Client, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, ErrClosed
	}
	if c.client != nil && !isDone(c.dead) {
		return c.client, nil
	}
	client, err := c.dial(ctx, c.dest, c.cfg)
	if err != nil {
		return nil, err
	}
	dead := make(chan struct{})
	c.client, c.dead = client, dead
	c.monitors.Add(1)
	go func() {
		defer c.monitors.Done()
		_ = client.Wait()
		close(dead)
	}()
	return client, nil
}

// Dead returns a channel that is closed when the client last handed out by
// Client has ended (nil before the first dial).
func (c *Conn) Dead() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.dead
}

// Close closes the current client; Client fails with ErrClosed afterwards.
func (c *Conn) Close() error {
	c.mu.Lock()
	c.closed = true
	client, dead := c.client, c.dead
	c.mu.Unlock()
	var err error
	if client != nil && !isDone(dead) {
		err = client.Close()
	}
	c.monitors.Wait()
	return err
}

func isDone(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
