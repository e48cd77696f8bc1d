package acpclient

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"
)

// readLoop reads the agent's lines until its output ends. An answer to one
// of our calls settles it; requests and notifications from the agent are
// queued for the dispatch goroutine (notifications in batches while more
// lines are buffered, see readBatch); bad lines are reported and skipped.
// At the end it fails the calls still waiting and closes the transport.
func (c *Conn) readLoop() {
	for {
		line, err := c.lines.next()
		if err != nil {
			c.endRead(err)
			c.shutdown()
			return
		}
		if c.trace != nil {
			c.trace.line(WireTraceIn, line)
		}
		c.handleLine(line)
		if !c.lines.lineBuffered() { // the next read may wait on the agent
			c.flushBatch()
			c.chunks.deltas.Release()
		}
	}
}

// endRead records why reading stopped and lets the dispatcher drain.
func (c *Conn) endRead(err error) {
	cause := err
	if errors.Is(err, io.EOF) || errors.Is(err, os.ErrClosed) || errors.Is(err, io.ErrClosedPipe) {
		cause = nil
	}
	if er, ok := c.rwc.(ExitReporter); ok {
		select {
		case <-er.Exited():
			if e := er.ExitError(); e != nil {
				cause = e
			}
		case <-time.After(c.opts.ExitWait):
		}
	}
	c.setErr(cause)
	c.flushBatch()
	c.queue.close()
	c.failInflight()
	close(c.readEnd)
}

// handleLine classifies one line and acts on it: it settles a call, queues
// a message, or reports the line as bad. A malformed request whose id can
// be recovered is skipped and answered with an error (see salvage).
func (c *Conn) handleLine(line []byte) {
	if m := c.fastLine(line); m != nil {
		c.enqueue(m)
		return
	}
	var env envelope
	if err := json.Unmarshal(line, &env); err != nil {
		reason := "not JSON"
		if len(line) > 0 && line[0] == '{' {
			reason = "malformed JSON: " + err.Error()
		}
		c.badLine(reason, line)
		if s := salvage(line); s.answerable() {
			c.answerMalformed(s, err, len(line))
		}
		return
	}
	if env.JSONRPC != nil && *env.JSONRPC != "2.0" {
		c.badLine(fmt.Sprintf("jsonrpc version %q", *env.JSONRPC), line)
		return
	}
	params := json.RawMessage(env.Params)
	if !c.lines.lineOwned() {
		params = bytes.Clone(params)
	}
	switch {
	case env.Method != nil && env.Result == nil && env.Error == nil:
		c.inboundMessage(*env.Method, env.ID, params, len(line))
		return
	case env.Method == nil && (env.Result != nil) != (env.Error != nil):
		c.inboundResponse(&env, line)
		return
	}
	c.badLine("neither a request nor a response", line)
}

// inboundMessage queues a request or notification from the agent.
func (c *Conn) inboundMessage(method string, id, params json.RawMessage, size int) {
	if method == "$/cancel_request" && id == nil {
		// Acted on at once: the request it names may be queued or waiting.
		var p struct {
			RequestID json.RawMessage `json:"requestId"`
		}
		if json.Unmarshal(params, &p) == nil && p.RequestID != nil {
			c.cancelInbound(compactID(p.RequestID))
		}
		return
	}
	m := &inbound{method: method, params: params, size: queuedSize(size, false)}
	if id != nil {
		m.id = compactID(id)
		m.req = c.newInboundRequest(m.id)
	} else if method == methodSessionUpdate {
		var n SessionNotification
		if err := n.UnmarshalJSON(params); err != nil {
			c.badLine("session/update params: "+err.Error(), params)
			return
		}
		m.update, m.params, m.size, m.src = &n, nil, queuedSize(size, true), rawSource{raw: params}
	}
	c.enqueue(m)
}

// inboundResponse settles the call the answer is for. The hook of a call
// that has one runs at the answer's place in the stream; the caller returns
// once everything before the answer has been delivered.
func (c *Conn) inboundResponse(env *envelope, line []byte) {
	id, ok := parseOurID(env.ID)
	var oc *outCall
	if ok {
		oc = c.takeCall(id)
	}
	if oc == nil {
		c.badLine("response to no pending request (id "+string(env.ID)+")", line)
		return
	}
	c.flushBatch() // the barrier below counts what came before the answer
	var errObj *Error
	if env.Error != nil {
		errObj = decodeWireError(env.Error)
	}
	if oc.hook != nil {
		result, hook := env.Result, oc.hook
		c.enqueue(&inbound{settle: func() { hook(result, errObj) }})
	}
	oc.settle(env.Result, errObj, c.queue.mark())
}

// decodeWireError reads an error object leniently: a malformed one still
// yields an error the caller can show.
func decodeWireError(raw json.RawMessage) *Error {
	var e Error
	if lenientUnmarshal(raw, &e) != nil || (e.Code == 0 && e.Message == "") {
		return &Error{Code: CodeInternalError, Message: "malformed error from agent: " + string(quoteLine(raw))}
	}
	return &e
}

func (c *Conn) badLine(reason string, line []byte) {
	c.logger.Warn("acpclient: skipped incoming line", "reason", reason, "size", len(line))
	if c.opts.OnBadLine != nil {
		c.opts.OnBadLine(BadLine{Reason: reason, Line: quoteLine(line), Size: len(line)})
	}
}

// compactID returns a request id in canonical compact form.
func compactID(id json.RawMessage) json.RawMessage {
	var buf bytes.Buffer
	if json.Compact(&buf, id) != nil {
		return append(json.RawMessage(nil), id...)
	}
	return buf.Bytes()
}
