package acptest

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"sync"
)

// Agent is a scripted fake ACP agent. Set the exported fields before the
// first Serve; the methods are safe for concurrent use.
type Agent struct {
	// Stderr receives Stderr steps and the agent's own diagnostics (junk it
	// read, responses to unknown ids). Nil discards them.
	Stderr io.Writer
	// Record, if set, receives every line the agent reads, verbatim, one
	// per line.
	Record io.Writer
	// Exit, if set, is called by an Exit step instead of closing the
	// connection; the fakeagent binary passes os.Exit.
	Exit func(code int)

	script Script

	mu       sync.Mutex
	received []Message
	changed  chan struct{} // closed and replaced when received grows
	recordMu sync.Mutex
	stderrMu sync.Mutex
}

// NewAgent returns an agent that follows script.
func NewAgent(script Script) *Agent {
	return &Agent{script: script, changed: make(chan struct{})}
}

// Message is one message the agent received.
type Message struct {
	// ID is the raw id of a request or response; nil for a notification.
	ID json.RawMessage `json:"id,omitempty"`
	// Method and Params are set for requests and notifications.
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	// Result or Error is set for the client's answers to the agent's
	// requests.
	Result json.RawMessage `json:"result,omitempty"`
	Error  *Error          `json:"error,omitempty"`
}

// ExitError is what Serve returns after an Exit step.
type ExitError struct{ Code int }

// Error says which code the agent exited with.
func (e *ExitError) Error() string {
	return "acptest: fake agent exited with code " + strconv.Itoa(e.Code)
}

// Received returns a copy of every message received so far, in order.
func (a *Agent) Received() []Message {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]Message(nil), a.received...)
}

// WaitFor returns the first received message (already received or still to
// come) for which match returns true, or ctx's error.
func (a *Agent) WaitFor(ctx context.Context, match func(Message) bool) (Message, error) {
	seen := 0
	for {
		a.mu.Lock()
		msgs, changed := a.received[seen:], a.changed
		seen = len(a.received)
		a.mu.Unlock()
		for _, m := range msgs {
			if match(m) {
				return m, nil
			}
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return Message{}, ctx.Err()
		}
	}
}

// Method returns a matcher for WaitFor that accepts messages of method.
func Method(method string) func(Message) bool {
	return func(m Message) bool { return m.Method == method }
}

func (a *Agent) addReceived(m Message) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.received = append(a.received, m)
	close(a.changed)
	a.changed = make(chan struct{})
}

// Serve speaks ACP as the agent: it reads the client's messages from r and
// writes its own to w until r ends (or, with StayAfterEOF, until ctx ends).
// When ctx ends or an Exit step runs, Serve closes r and w if they are
// io.Closers, so that a blocked read or write ends too. It returns nil after
// the end of input, *ExitError after an Exit step, ctx's error if ctx ended,
// or the read error.
func (a *Agent) Serve(ctx context.Context, r io.Reader, w io.Writer) error {
	c := &conn{
		agent:    a,
		script:   &a.script,
		r:        r,
		w:        w,
		nextID:   a.script.RequestIDs.Start,
		pending:  map[string]chan Message{},
		calls:    map[string]*call{},
		turns:    map[string]*call{},
		sessions: map[string]string{},
		authed:   map[string]bool{},
	}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	defer c.cancel()
	stop := context.AfterFunc(ctx, c.closeIO)
	defer stop()

	if err := c.run(runner{}, a.script.OnStart); err != nil && !errors.Is(err, errClosed) {
		c.logf("onStart: %v", err)
	}
	var readErr error
	if c.ctx.Err() == nil {
		readErr = c.readLoop()
	}
	if readErr == nil && a.script.StayAfterEOF {
		select {
		case <-ctx.Done():
		case <-c.ctx.Done():
		}
	}
	c.cancel()
	c.handlers.Wait()

	c.mu.Lock()
	code := c.exitCode
	c.mu.Unlock()
	switch {
	case code != nil:
		return &ExitError{Code: *code}
	case ctx.Err() != nil:
		return ctx.Err()
	}
	return readErr
}
