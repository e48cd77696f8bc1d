package acptest

import (
	"context"
	"fmt"
	"io"
	"net"
	"sync"
)

// Transport starts a fresh in-process fake agent that follows Script at
// every Connect, on a new in-memory connection. It has the method of
// acpclient.Transport, so it can stand in for an agent process in an
// acpclient.Conn or a bridge.Config; because each Connect is a new agent, a
// bridge that restarts its agent (after a crash, a sign-in or a relaunch)
// gets a new one, as it would with a process.
//
// Use a Transport by pointer; the zero value runs the zero Script.
type Transport struct {
	// Script is what every agent started by Connect follows. Set it before
	// the first Connect.
	Script Script
	// Stderr, if set, receives every agent's Stderr steps and diagnostics
	// (junk it read, responses to unknown ids); nil discards them.
	Stderr io.Writer

	mu        sync.Mutex
	agents    []*Agent
	httpConns map[string]*httpConn // Streamable HTTP connections by id
}

// Connect starts an agent and returns the client's end of its connection.
// ctx bounds only the start; the agent runs until the returned stream is
// closed or an Exit step ends it (the client then reads end of file).
// Closing the stream ends the agent, even one whose Script has
// StayAfterEOF, and waits until its goroutines have returned.
func (t *Transport) Connect(ctx context.Context) (io.ReadWriteCloser, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("acptest: starting the fake agent: %w", err)
	}
	a := NewAgent(t.Script)
	a.Stderr = t.Stderr
	t.mu.Lock()
	t.agents = append(t.agents, a)
	t.mu.Unlock()

	client, agentEnd := net.Pipe()
	serveCtx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		// Serve's error says how the agent ended; the client has seen that
		// already as the end of its stream.
		_ = a.Serve(serveCtx, agentEnd, agentEnd)
		agentEnd.Close()
	}()
	return &stream{Conn: client, stop: stop, done: done}, nil
}

// Agents returns the agents Connect has started, oldest first, so a test
// can check what each one received (Agent.Received, Agent.WaitFor).
func (t *Transport) Agents() []*Agent {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]*Agent(nil), t.agents...)
}

// stream is the client's end of an in-process agent's connection.
type stream struct {
	net.Conn
	stop context.CancelFunc
	done chan struct{}
}

// Close ends the agent's input, stops the agent and waits for it.
func (s *stream) Close() error {
	err := s.Conn.Close()
	s.stop()
	<-s.done
	return err
}
