package acpclient

import (
	"context"
	"encoding/json"
	"errors"
)

// outCall is one of our requests to the agent, from the moment it is
// registered (before it is written, so that no answer can beat it) until its
// answer arrives or the connection ends.
//
// The read goroutine fills in the answer and then closes done; the caller
// reads the answer only after done is closed, so the fields need no lock.
type outCall struct {
	done chan struct{}
	// hook, when set, runs on the dispatch goroutine at the answer's place
	// in the stream (see PromptThen).
	hook func(json.RawMessage, *Error)

	answered bool            // false: the connection ended first
	result   json.RawMessage // the answer's result (a copy, the caller's to keep)
	err      *Error          // the answer's error
	// barrier is the queue mark when the answer arrived: the caller returns
	// only once the dispatcher has delivered every message before it.
	barrier uint64
}

// errCallsEnded is what a call whose answer can no longer come waits for:
// the connection ended (Close, the agent's output ended). Callers report
// the connection's own reason (see callError).
var errCallsEnded = errors.New("the connection ended before the answer")

// wireRequest is a request (with an ID) or a notification we send. One
// json.Marshal writes the whole line: params are encoded once, in place.
type wireRequest struct {
	JSONRPC string  `json:"jsonrpc"`
	ID      *uint64 `json:"id,omitempty"`
	Method  string  `json:"method"`
	Params  any     `json:"params,omitempty"`
}

// register adds a call awaiting the answer to id, or reports that the
// connection has ended.
func (c *Conn) register(id uint64, hook func(json.RawMessage, *Error)) (*outCall, error) {
	oc := &outCall{done: make(chan struct{}), hook: hook}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.callsEnded {
		return nil, errCallsEnded
	}
	c.calls[id] = oc
	return oc, nil
}

// unregister forgets a call whose request could not be written.
func (c *Conn) unregister(id uint64) {
	c.mu.Lock()
	delete(c.calls, id)
	c.mu.Unlock()
}

// takeCall removes and returns the call awaiting the answer with this id,
// or nil when there is none (an answer nobody asked for, or a second one).
// A call whose caller gave up stays registered, so its late answer is
// taken here and absorbed rather than reported as a bad line.
func (c *Conn) takeCall(id uint64) *outCall {
	c.mu.Lock()
	defer c.mu.Unlock()
	oc := c.calls[id]
	delete(c.calls, id)
	return oc
}

// endCalls fails every call still awaiting an answer, and every later one,
// with errCallsEnded. It runs once the connection has ended or is closing.
func (c *Conn) endCalls() {
	c.mu.Lock()
	calls := c.calls
	c.calls, c.callsEnded = nil, true
	c.mu.Unlock()
	for _, oc := range calls {
		close(oc.done)
	}
}

// wait waits for the call's answer: nil once it has one, errCallsEnded when
// the connection ended first, or the context's error.
func (oc *outCall) wait(ctx context.Context) error {
	select {
	case <-oc.done:
	case <-ctx.Done():
		select {
		case <-oc.done: // answered too: the answer wins
		default:
			return ctx.Err()
		}
	}
	if !oc.answered {
		return errCallsEnded
	}
	return nil
}

// settle records the answer and wakes the caller.
func (oc *outCall) settle(result json.RawMessage, err *Error, barrier uint64) {
	oc.answered, oc.result, oc.err, oc.barrier = true, result, err, barrier
	close(oc.done)
}
