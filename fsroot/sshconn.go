package fsroot

import (
	"context"
	"sync"

	"golang.org/x/crypto/ssh"
)

// SSHConn holds one SSH connection to a host and replaces it when it dies:
// Client hands out the current *ssh.Client and dials a new one if the last
// has closed (server gone, keepalive missed). An SFTP root and agents
// launched over SSH can share one SSHConn, and so one connection.
type SSHConn struct {
	cfg  DialConfig
	dial func(context.Context, DialConfig) (*ssh.Client, error)

	mu     sync.Mutex
	client *ssh.Client
	dead   chan struct{} // closed when client has ended
	closed bool
	// monitors counts the goroutines that wait for each client to end.
	monitors sync.WaitGroup
}

// NewSSHConn returns a connection that dials cfg on first use. It does not
// dial yet.
func NewSSHConn(cfg DialConfig) *SSHConn {
	return &SSHConn{cfg: cfg, dial: Dial}
}

// Client returns a live client, dialing when there is none or the previous
// one has closed. Concurrent callers share one dial.
func (c *SSHConn) Client(ctx context.Context) (*ssh.Client, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, ErrClosed
	}
	if c.client != nil && !isDone(c.dead) {
		return c.client, nil
	}
	client, err := c.dial(ctx, c.cfg)
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
func (c *SSHConn) Dead() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.dead
}

// Close closes the current client; Client fails with ErrClosed afterwards.
func (c *SSHConn) Close() error {
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
