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

// readObject is the read loop's body, called by jsonrpc2 for its next
// message. It reads lines until one is a response to one of our calls, which
// it decodes into v; requests and notifications from the agent are queued
// for the dispatch goroutine on the way (notifications in batches while
// more lines are buffered, see readBatch), and bad lines are reported and
// skipped. It returns an error only when the stream itself has ended.
func (c *Conn) readObject(v any) error {
	for {
		line, err := c.lines.next()
		if err != nil {
			c.endRead(err)
			return err
		}
		if c.trace != nil {
			c.trace.line(WireTraceIn, line)
		}
		if resp := c.handleLine(line); resp != nil {
			return json.Unmarshal(resp, v)
		}
		if !c.lines.lineBuffered() { // the next read may wait on the agent
			c.flushBatch()
			c.chunks.boxes.release()
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

// handleLine classifies one line. It returns the normalised bytes of a
// response for jsonrpc2, or nil when the line was queued or skipped. A
// malformed request whose id can be recovered is skipped and answered with
// an error (see salvage).
func (c *Conn) handleLine(line []byte) []byte {
	if m := c.chunks.decode(line, c.lines.lineOwned()); m != nil {
		c.enqueue(m)
		return nil
	}
	if n := decodeToolLine(line, c.lines.lineOwned()); n != nil {
		c.enqueue(&inbound{method: methodSessionUpdate, update: n, size: queuedSize(len(line), true)})
		return nil
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
		return nil
	}
	if env.JSONRPC != nil && *env.JSONRPC != "2.0" {
		c.badLine(fmt.Sprintf("jsonrpc version %q", *env.JSONRPC), line)
		return nil
	}
	params := json.RawMessage(env.Params)
	if !c.lines.lineOwned() {
		params = bytes.Clone(params)
	}
	switch {
	case env.Method != nil && env.Result == nil && env.Error == nil:
		c.inboundMessage(*env.Method, env.ID, params, len(line))
		return nil
	case env.Method == nil && (env.Result != nil) != (env.Error != nil):
		return c.inboundResponse(&env, line)
	}
	c.badLine("neither a request nor a response", line)
	return nil
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
		m.update, m.params, m.size = &n, nil, queuedSize(size, true)
	}
	c.enqueue(m)
}

// inboundResponse checks a response is for one of our calls and returns it
// in a form jsonrpc2 cannot choke on.
func (c *Conn) inboundResponse(env *envelope, line []byte) []byte {
	id, ok := parseOurID(env.ID)
	c.mu.Lock()
	var hook func(json.RawMessage, *Error)
	if ok && c.awaiting[id] {
		delete(c.awaiting, id)
		hook = c.settleHooks[id]
		delete(c.settleHooks, id)
	} else {
		ok = false
	}
	c.mu.Unlock()
	if !ok {
		c.badLine("response to no pending request (id "+string(env.ID)+")", line)
		return nil
	}
	c.flushBatch() // the barrier below counts what came before the answer
	if hook != nil {
		// Runs on the dispatch goroutine at the answer's place in the stream.
		result, errObj := env.Result, (*Error)(nil)
		if env.Error != nil {
			errObj = decodeWireError(env.Error)
		}
		c.enqueue(&inbound{settle: func() { hook(result, errObj) }})
	}
	c.mu.Lock()
	c.barriers[id] = c.queue.mark()
	c.mu.Unlock()
	var out []byte
	if env.Result != nil {
		out, _ = json.Marshal(struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      uint64          `json:"id"`
			Result  json.RawMessage `json:"result"`
		}{"2.0", id, env.Result})
		return out
	}
	e := decodeWireError(env.Error)
	out, _ = json.Marshal(struct {
		JSONRPC string `json:"jsonrpc"`
		ID      uint64 `json:"id"`
		Error   *Error `json:"error"`
	}{"2.0", id, e})
	return out
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
