package acpclient

import (
	"context"
	"errors"
	"io"
	"net"
)

// A Transport starts a byte stream to an agent: a local process, a command
// on an SSH host, or anything else that carries newline-delimited JSON-RPC.
// Connect is called once per connection; Closing the stream it returns must
// end the agent (and, for processes, everything the agent started).
type Transport interface {
	Connect(ctx context.Context) (io.ReadWriteCloser, error)
}

// An ExitReporter is a stream whose far end is a process. A Conn uses it to
// say why its stream ended: the exit status and the tail of stderr.
type ExitReporter interface {
	// Exited is closed when the process has exited.
	Exited() <-chan struct{}
	// ExitError describes the exit; nil before Exited is closed.
	ExitError() *ExitError
}

// IOTransport is a Transport over an existing stream, e.g. a socket or a
// pipe pair the caller set up. It can be connected once.
type IOTransport struct {
	Stream io.ReadWriteCloser
}

// Connect returns the stream.
func (t *IOTransport) Connect(context.Context) (io.ReadWriteCloser, error) {
	if t.Stream == nil {
		return nil, errors.New("acpclient: IOTransport has no stream (or was already connected)")
	}
	s := t.Stream
	t.Stream = nil
	return s, nil
}

// NewInMemoryTransports returns two connected transports: give one to a Conn
// and serve an agent (such as a test double) on the other. Writes block until
// the other side reads, like a real pipe with a small buffer. Like any
// IOTransport, each side connects once, so the pair serves one Conn; where
// a transport is connected again (a bridge.Config's, which restarts its
// agent), use acptest.Transport or a Transport that makes a new pair at
// every Connect.
func NewInMemoryTransports() (client, agent *IOTransport) {
	c, a := net.Pipe()
	return &IOTransport{Stream: c}, &IOTransport{Stream: a}
}
