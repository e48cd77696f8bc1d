package acpclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/acphost/acphost/internal/wire"
)

// inboundRequest tracks one request from the agent until it is answered.
type inboundRequest struct {
	id     json.RawMessage
	ctx    context.Context
	cancel context.CancelFunc
	once   sync.Once
}

func (c *Conn) newInboundRequest(id json.RawMessage) *inboundRequest {
	ctx, cancel := context.WithCancel(context.WithValue(c.ctx, dispatchKey{}, true))
	r := &inboundRequest{id: id, ctx: ctx, cancel: cancel}
	c.mu.Lock()
	c.inflight[idKey(id)] = r
	c.mu.Unlock()
	return r
}

// respond sends the answer to r, once; later answers are dropped. A nil
// result is sent as {}, never null.
func (c *Conn) respond(r *inboundRequest, result any, err error) {
	r.once.Do(func() {
		c.mu.Lock()
		if c.inflight[idKey(r.id)] == r {
			delete(c.inflight, idKey(r.id))
		}
		c.mu.Unlock()
		r.cancel()
		if werr := c.writeResponse(r.id, result, err); werr != nil {
			c.logger.Debug("acpclient: could not send response", "id", string(r.id), "err", werr)
		}
	})
}

func (c *Conn) writeResponse(id json.RawMessage, result any, err error) error {
	if err != nil {
		return c.out.writeJSON(struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Error   *Error          `json:"error"`
		}{"2.0", id, toWireError(err)})
	}
	var raw json.RawMessage
	switch r := result.(type) {
	case nil:
		raw = json.RawMessage("{}")
	case json.RawMessage:
		raw = r
	default:
		b, merr := json.Marshal(result)
		if merr != nil {
			return c.writeResponse(id, nil, fmt.Errorf("encoding result: %w", merr))
		}
		raw = b
	}
	if len(raw) == 0 || string(raw) == "null" {
		raw = json.RawMessage("{}")
	}
	return c.out.writeJSON(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  json.RawMessage `json:"result"`
	}{"2.0", id, raw})
}

// toWireError picks the JSON-RPC error for a handler's error.
func toWireError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	if errors.Is(err, context.Canceled) {
		return &Error{Code: CodeRequestCancelled, Message: "request cancelled"}
	}
	return &Error{Code: CodeInternalError, Message: err.Error()}
}

// cancelInbound answers a request the agent abandoned with -32800.
func (c *Conn) cancelInbound(id json.RawMessage) {
	c.mu.Lock()
	r := c.inflight[idKey(id)]
	c.mu.Unlock()
	if r != nil {
		c.respond(r, nil, &Error{Code: CodeRequestCancelled, Message: "request cancelled by the agent"})
	}
}

// failInflight cancels the contexts of requests that can no longer be
// answered because the connection ended.
func (c *Conn) failInflight() {
	c.mu.Lock()
	reqs := make([]*inboundRequest, 0, len(c.inflight))
	for _, r := range c.inflight {
		reqs = append(reqs, r)
	}
	c.mu.Unlock()
	for _, r := range reqs {
		r.cancel()
	}
}

// dispatchLoop delivers queued messages to the Client, one at a time, in
// arrival order, until the queue is closed and drained; file calls go on to
// the file worker (see fileCalls), which it waits for at the end.
func (c *Conn) dispatchLoop() {
	defer c.files.wait()
	ctx := context.WithValue(c.ctx, dispatchKey{}, true)
	recv, _ := c.client.(receiver)
	var run []*inbound
	var us []wire.Update[*SessionNotification]
	for {
		var ok bool
		if run, ok = c.queue.popRun(run[:0], maxUpdateRun); !ok {
			return
		}
		switch m := run[0]; {
		case m.isUpdate() && recv != nil:
			us = c.deliverUpdates(ctx, recv, run, us[:0])
			c.queue.doneRun(run)
			c.chunks.giveBack(run) // after doneRun, which reads the entries
			clear(run)
			continue
		case isFileCall(m):
			c.handOff(ctx, m) // accounted for when answered
			clear(run)
			continue
		default:
			for _, m := range run {
				c.deliver(ctx, m)
			}
		}
		c.queue.doneRun(run)
		clear(run)
	}
}

// receiver is the internal receiving side of a Client (the bridge's): it
// takes runs of updates, text deltas among them, with their raw bytes.
type receiver = wire.Receiver[*SessionNotification]

// maxUpdateRun bounds a run of notifications delivered in one call, so the
// bytes of a run are given back to the queue's budget soon.
const maxUpdateRun = 64

// deliverUpdates hands a run of session/update notifications and text
// deltas to a receiver, in the agent's order, in related runs (relatedRun): a panic in the receiver is logged, as deliver does, and
// costs the related run it was handling alone, never an unrelated update
// that happened to be read with it. A notification carries its raw update
// unless it is a message chunk. What it leaves boxed is the Conn's again
// once it returns (giveBack). It returns buf for reuse.
func (c *Conn) deliverUpdates(ctx context.Context, recv receiver, run []*inbound, buf []wire.Update[*SessionNotification]) []wire.Update[*SessionNotification] {
	for _, m := range run {
		if m.delta != nil {
			buf = append(buf, wire.Update[*SessionNotification]{Delta: *m.delta, IsDelta: true})
			continue
		}
		u := wire.Update[*SessionNotification]{Note: m.update}
		switch m.update.Update.(type) {
		case *AgentMessageChunk, *AgentThoughtChunk, *UserMessageChunk:
		default:
			u.Raw = m.src.update(m.update)
		}
		buf = append(buf, u)
	}
	for rest := buf; len(rest) > 0; {
		n := relatedRun(rest)
		c.deliverRelated(ctx, recv, rest[:n])
		rest = rest[n:]
	}
	clear(buf)
	return buf
}

// relatedRun returns how many updates from the start of us are delivered
// together: consecutive pieces of one session's streamed messages (text
// deltas and message chunks), or one other notification. Which updates
// share a queue run depends on how the agent's writes were read; which
// share a delivery does not.
func relatedRun(us []wire.Update[*SessionNotification]) int {
	sid, ok := streamed(&us[0])
	if !ok {
		return 1
	}
	n := 1
	for n < len(us) {
		if s, ok := streamed(&us[n]); !ok || s != sid {
			break
		}
		n++
	}
	return n
}

// streamed reports whether u is a piece of a streamed message (a text
// delta or a message chunk), and of which session.
func streamed(u *wire.Update[*SessionNotification]) (session string, ok bool) {
	if u.IsDelta {
		return u.Delta.SessionID, true
	}
	switch u.Note.Update.(type) {
	case *AgentMessageChunk, *AgentThoughtChunk, *UserMessageChunk:
		return u.Note.SessionID, true
	}
	return "", false
}

// deliverRelated hands one related run to the receiver, turning a panic
// in it into a log entry.
func (c *Conn) deliverRelated(ctx context.Context, recv receiver, us []wire.Update[*SessionNotification]) {
	defer func() {
		if p := recover(); p != nil {
			c.logger.Error("acpclient: client method panicked", "method", methodSessionUpdate, "panic", p, "run", len(us))
		}
	}()
	recv.Updates(ctx, us)
}

// deliver hands one message to the Client, turning a panic in it into an
// error answer instead of a dead connection.
func (c *Conn) deliver(ctx context.Context, m *inbound) {
	defer func() {
		if p := recover(); p != nil {
			c.logger.Error("acpclient: client method panicked", "method", m.method, "panic", p)
			if m.req != nil {
				c.respond(m.req, nil, fmt.Errorf("client panicked handling %s: %v", m.method, p))
			}
		}
	}()
	if m.reject != nil {
		c.respond(m.req, nil, m.reject)
		return
	}
	if m.settle != nil {
		// The hook's place in the stream is after every file call the
		// agent sent before the answer.
		c.files.wait()
		m.settle()
		return
	}
	if m.req == nil {
		c.deliverNotification(ctx, m)
		return
	}
	select {
	case <-m.req.ctx.Done():
		// Cancelled while queued; respond answered it already (or the
		// connection is gone).
		c.respond(m.req, nil, context.Canceled)
		return
	default:
	}
	c.deliverRequest(m.req.ctx, m)
}

func (c *Conn) deliverNotification(ctx context.Context, m *inbound) {
	switch m.method {
	case methodSessionUpdate:
		c.client.SessionUpdate(ctx, m.update)
	case "elicitation/complete":
		if h, ok := c.client.(Elicitations); ok {
			var n CompleteElicitationNotification
			if c.decodeParams(m, &n) {
				h.CompleteElicitation(ctx, &n)
			}
		}
	default:
		if h, ok := c.client.(ExtensionHandler); ok {
			h.HandleExtensionNotification(ctx, m.method, m.params)
			return
		}
		c.logger.Debug("acpclient: dropped notification", "method", m.method)
	}
}

// decodeParams decodes a message's params leniently, logging failures; a
// request whose params cannot be decoded is answered with -32602.
func (c *Conn) decodeParams(m *inbound, v any) bool {
	params := bytes.TrimSpace(m.params)
	var err error
	if len(params) == 0 || params[0] != '{' {
		err = errors.New("params must be an object")
	} else {
		err = lenientUnmarshal(params, v)
	}
	if err != nil {
		if m.req != nil {
			c.respond(m.req, nil, NewError(CodeInvalidParams, "invalid params for %s: %v", m.method, err))
		} else {
			c.badLine(m.method+" params: "+err.Error(), m.params)
		}
		return false
	}
	return true
}

// deliverRequest serves one request. The handler's context carries the
// dispatch marker and is cancelled if the agent abandons the request.
func (c *Conn) deliverRequest(ctx context.Context, m *inbound) {
	r := m.req
	reply := func(result any, err error) { c.respond(r, result, err) }
	notFound := func() { reply(nil, NewError(CodeMethodNotFound, "method not found: %s", m.method)) }
	switch m.method {
	case "session/request_permission":
		var req RequestPermissionRequest
		if c.decodeParams(m, &req) {
			c.client.RequestPermission(ctx, &req, func(resp *RequestPermissionResponse, err error) {
				if resp == nil && err == nil {
					resp = PermissionCancelled()
				}
				reply(resp, err)
			})
		}
	case "fs/read_text_file":
		h, ok := c.client.(TextFileReader)
		if !ok {
			notFound()
			return
		}
		c.serveReadTextFile(ctx, h, m, reply)
	case "fs/write_text_file":
		h, ok := c.client.(TextFileWriter)
		if !ok {
			notFound()
			return
		}
		c.serveWriteTextFile(ctx, h, m, reply)
	case "terminal/create", "terminal/output", "terminal/wait_for_exit", "terminal/kill", "terminal/release":
		h, ok := c.client.(Terminals)
		if !ok {
			notFound()
			return
		}
		c.deliverTerminal(ctx, h, m, reply)
	case "elicitation/create":
		h, ok := c.client.(Elicitations)
		if !ok {
			notFound()
			return
		}
		var req CreateElicitationRequest
		if !c.decodeParams(m, &req) {
			return
		}
		supported := false
		for _, mode := range h.ElicitationModes() {
			supported = supported || mode == req.Mode
		}
		if !supported {
			reply(nil, NewError(CodeInvalidParams, "elicitation mode %q is not supported by this client", req.Mode))
			return
		}
		h.CreateElicitation(ctx, &req, func(resp *CreateElicitationResponse, err error) {
			if resp == nil && err == nil {
				resp = &CreateElicitationResponse{Action: "cancel"}
			}
			reply(resp, err)
		})
	default:
		h, ok := c.client.(ExtensionHandler)
		if !ok || !strings.HasPrefix(m.method, "_") {
			notFound()
			return
		}
		reply(h.HandleExtension(ctx, m.method, m.params))
	}
}

func (c *Conn) deliverTerminal(ctx context.Context, h Terminals, m *inbound, reply func(any, error)) {
	if m.method == "terminal/create" {
		var req CreateTerminalRequest
		if !c.decodeParams(m, &req) {
			return
		}
		if s, ok := h.(TerminalStarter); ok {
			s.StartTerminal(ctx, &req, func(resp *CreateTerminalResponse, err error) { reply(resp, err) })
			return
		}
		reply(h.CreateTerminal(ctx, &req))
		return
	}
	var req TerminalRequest
	if !c.decodeParams(m, &req) {
		return
	}
	switch m.method {
	case "terminal/output":
		reply(h.TerminalOutput(ctx, &req))
	case "terminal/wait_for_exit":
		h.WaitForTerminalExit(ctx, &req, func(st *TerminalExitStatus, err error) { reply(st, err) })
	case "terminal/kill":
		reply(nil, h.KillTerminal(ctx, &req))
	case "terminal/release":
		reply(nil, h.ReleaseTerminal(ctx, &req))
	}
}
