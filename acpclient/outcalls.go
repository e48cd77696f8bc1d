package acpclient

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/sourcegraph/jsonrpc2"
)

// outCall is one of our requests to the agent. github.com/sourcegraph/jsonrpc2
// correlates it (id, pending answer, error, the connection's end); the Conn
// keeps beside it only what that library has no place for: the hook run at
// the answer's place in the stream and the queue mark the caller waits for.
// The call is in c.calls from before it is written until its answer is
// read (or the connection ends), so that onAnswer finds it.
type outCall struct {
	w jsonrpc2.Waiter
	// hook, when set, runs on the dispatch goroutine at the answer's place
	// in the stream (see PromptThen).
	hook func(json.RawMessage, *Error)

	result json.RawMessage // the answer's result, once wait returned nil
	err    *Error          // or the answer's error
	// barrier is the queue mark when the answer arrived: the caller returns
	// only once the dispatcher has delivered every message before it. The
	// read goroutine sets it before jsonrpc2 wakes the caller.
	barrier uint64
}

// errCallsEnded is what a call whose answer can no longer come waits for:
// the connection ended (Close, the agent's output ended). Callers report
// the connection's own reason (see callError).
var errCallsEnded = errors.New("the connection ended before the answer")

// register adds a call awaiting the answer to id, or reports that the
// connection has ended.
func (c *Conn) register(id uint64, hook func(json.RawMessage, *Error)) (*outCall, error) {
	oc := &outCall{hook: hook}
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

// takeCall removes and returns the call awaiting the answer with this id.
// A call whose caller gave up stays registered (in jsonrpc2 too), so its
// late answer is taken and absorbed rather than reported as a bad line.
func (c *Conn) takeCall(id uint64) *outCall {
	c.mu.Lock()
	defer c.mu.Unlock()
	oc := c.calls[id]
	delete(c.calls, id)
	return oc
}

// endCalls forgets every call still awaiting an answer and refuses later
// ones; jsonrpc2 fails their waits. It runs once the connection has ended
// or is closing.
func (c *Conn) endCalls() {
	c.mu.Lock()
	c.calls, c.callsEnded = nil, true
	c.mu.Unlock()
}

// onAnswer runs on the read goroutine for each answer jsonrpc2 read, before
// it wakes the caller: req is nil for an answer nobody asked for (or a
// second one), a bad line; else the call learns its barrier, and a hook is
// queued at the answer's place in the stream.
func (c *Conn) onAnswer(req *jsonrpc2.Request, resp *jsonrpc2.Response) {
	if resp == nil {
		return
	}
	if req == nil {
		c.badLine("response to no pending request (id "+resp.ID.String()+")", c.answerLine)
		return
	}
	oc := c.takeCall(req.ID.Num)
	if oc == nil {
		return
	}
	if oc.hook != nil {
		var result json.RawMessage
		if resp.Result != nil {
			result = *resp.Result
		}
		hook, errObj := oc.hook, wireError(resp.Error)
		c.enqueue(&inbound{settle: func() { hook(result, errObj) }}) // goes at once
	}
	oc.barrier = c.queue.mark()
}

// wireError turns jsonrpc2's error object into ours (nil for nil).
func wireError(e *jsonrpc2.Error) *Error {
	if e == nil {
		return nil
	}
	out := &Error{Code: int(e.Code), Message: e.Message}
	if e.Data != nil {
		out.Data = *e.Data
	}
	return out
}

// wait waits for the call's answer: nil once it has one (result or error
// answer), errCallsEnded when the connection ended first, or the context's
// error.
func (oc *outCall) wait(ctx context.Context) error {
	var raw json.RawMessage
	err := oc.w.Wait(ctx, &raw)
	var rpcErr *jsonrpc2.Error
	switch {
	case err == nil:
		oc.result = raw
		return nil
	case errors.As(err, &rpcErr):
		oc.err = wireError(rpcErr)
		return nil
	case errors.Is(err, jsonrpc2.ErrClosed):
		return errCallsEnded
	}
	return err
}
