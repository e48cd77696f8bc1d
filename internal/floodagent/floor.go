package floodagent

import (
	"bytes"
	"context"
	"fmt"
	"io"
)

// Sink is the floor of a flood benchmark, the pipe limit: an agent that has
// answered the handshake, whose floods are read by counting newlines and
// nothing else. Whatever a client does beyond that is its cost.
type Sink struct {
	t     Agent
	agent io.ReadWriteCloser
	buf   []byte
	id    int
}

// Agent is a way to start the flood agent: *Transport (in this process)
// or *Process (a process of its own).
type Agent interface {
	Connect(ctx context.Context) (io.ReadWriteCloser, error)
	linesPerFlood() int
}

// NewSink starts an agent from t and opens a session on it.
func NewSink(ctx context.Context, t Agent) (*Sink, error) {
	agent, err := t.Connect(ctx)
	if err != nil {
		return nil, err
	}
	k := &Sink{t: t, agent: agent, buf: make([]byte, 64<<10)}
	if err := k.call("initialize", 1); err != nil {
		agent.Close()
		return nil, err
	}
	if err := k.call("session/new", 1); err != nil {
		agent.Close()
		return nil, err
	}
	return k, nil
}

// Flood prompts the agent and counts the lines of its flood until the
// prompt's answer.
func (k *Sink) Flood() error { return k.call("session/prompt", k.t.linesPerFlood()) }

// call sends a request and reads lines answered lines.
func (k *Sink) call(method string, lines int) error {
	k.id++
	if _, err := fmt.Fprintf(k.agent, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":{"sessionId":"flood-1"}}`+"\n", k.id, method); err != nil {
		return err
	}
	for lines > 0 {
		n, err := k.agent.Read(k.buf)
		if err != nil {
			return fmt.Errorf("floodagent: reading the answer to %s: %w", method, err)
		}
		lines -= bytes.Count(k.buf[:n], []byte{'\n'})
	}
	return nil
}

// Close ends the agent.
func (k *Sink) Close() error { return k.agent.Close() }
