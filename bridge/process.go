package bridge

import (
	"context"
	"errors"
	"fmt"

	"github.com/acphost/acphost/acpclient"
)

// The agent process of a Bridge: starting it, noticing its exit, ending it.

// ensure returns the running connection, starting the agent if needed.
func (b *Bridge) ensure(ctx context.Context) (*acpclient.Conn, error) {
	b.startMu.Lock()
	defer b.startMu.Unlock()
	b.mu.Lock()
	conn, closed := b.conn, b.closed
	b.mu.Unlock()
	if closed {
		return nil, ErrClosed
	}
	if conn != nil && conn.Err() == nil {
		return conn, nil
	}
	if conn != nil {
		// The connection has ended but its process may still be stopping
		// (Done waits until it is gone): start the successor only then, so
		// two agents never run for one bridge, and never hand out the dead
		// connection to a call made right after a crash.
		select {
		case <-conn.Done():
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return b.start(ctx)
}

// start launches the process and performs initialize.
func (b *Bridge) start(ctx context.Context) (*acpclient.Conn, error) {
	client := &agentClient{b: b}
	var served acpclient.Client = client
	if len(b.cfg.ElicitationModes) > 0 {
		served = &elicitingClient{agentClient: client} // advertised only when the app renders them
	}
	served = b.withTerminals(served, client)
	conn, err := acpclient.Connect(ctx, b.cfg.Transport, served, b.cfg.Conn)
	if err != nil {
		return nil, fmt.Errorf("bridge %s: starting agent: %w", b.cfg.ID, err)
	}
	client.conn = conn
	info := b.cfg.ClientInfo
	if info == nil {
		info = &acpclient.Implementation{Name: "acphost", Version: "0.1.0"}
	}
	req := &acpclient.InitializeRequest{ClientInfo: info, Meta: b.cfg.InitializeMeta}
	if err := b.clientCapabilities(&req.ClientCapabilities); err != nil {
		conn.Close()
		<-conn.Done()
		return nil, err
	}
	resp, err := conn.Initialize(ctx, req)
	if err != nil {
		conn.Close()
		<-conn.Done()
		// An agent that dies before it answers may lack a key it was not
		// given.
		return nil, b.withWithheld(fmt.Errorf("bridge %s: %w", b.cfg.ID, err), nil) // acpclient names the method
	}
	b.mu.Lock()
	b.conn, b.agent = conn, resp
	b.mu.Unlock()
	b.running.Add(1)
	go b.watchExit(conn)
	return conn, nil
}

// watchExit reports the end of a process, after any turn it broke has
// reported its own end.
func (b *Bridge) watchExit(conn *acpclient.Conn) {
	defer b.running.Done()
	<-conn.Done()
	b.mu.Lock()
	if b.conn == conn {
		b.conn = nil
	}
	sessions := make([]*Session, 0, len(b.sessions))
	for _, s := range b.sessions {
		sessions = append(sessions, s)
	}
	closed := b.closed
	b.mu.Unlock()
	b.terminals.End(ofConn(conn)) // the agent's commands die with it
	for _, s := range sessions {
		s.pending.abandonAll(errAgentExited)
		s.turns.waitEnded()
	}
	var cause error
	if err := conn.Err(); err != nil && errors.Unwrap(err) != nil {
		cause = err
	}
	if !closed || cause != nil {
		b.emit(Event{Kind: KindExited, Err: cause})
	} else {
		b.emit(Event{Kind: KindExited})
	}
}

// Close ends the agent process and its sessions; it returns when the
// process is gone and its events have been queued. The sessions are closed
// as Session.Close would (their keys can be opened again, their records
// stay), without telling the agent, which is gone, and without
// session_closed events: the exited event says they ended.
func (b *Bridge) Close() error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil
	}
	b.closed = true
	b.closeEarlyLocked()
	conn := b.conn
	sessions := make([]*Session, 0, len(b.sessions))
	for _, s := range b.sessions {
		sessions = append(sessions, s)
	}
	b.mu.Unlock()
	b.pending.abandonAll(ErrClosed)
	for _, s := range sessions {
		s.pending.abandonAll(ErrClosed)
	}
	if conn != nil {
		conn.Close()
	}
	b.running.Wait()
	b.terminals.Close()
	for _, s := range b.openSessions() {
		s.close(context.Background(), false) // no turn runs once the process is gone
	}
	b.shell.Close()
	return nil
}

// kill ends the current process without closing the bridge (watchdog).
func (b *Bridge) kill(conn *acpclient.Conn) {
	b.logger.Warn("bridge: killing unresponsive agent", "agent", b.cfg.ID)
	conn.Close()
}
