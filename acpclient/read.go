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

// readObject is the read loop, run by jsonrpc2 for its next message. It
// reads the agent's lines until one answers one of our calls, which it
// decodes into v for jsonrpc2 to settle; requests and notifications from
// the agent are queued for the dispatch goroutine on the way
// (notifications in batches while more lines are buffered, see readBatch),
// bad lines are reported and skipped. It returns an error only when the
// stream has ended; jsonrpc2 then fails the calls still waiting and closes
// the transport.
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
		answer := c.handleLine(line)
		if answer != nil {
			if err := json.Unmarshal(answer, v); err != nil {
				c.badLine("malformed response: "+err.Error(), c.answerLine)
				answer = nil
			}
		}
		if !c.lines.lineBuffered() { // the next read may wait on the agent
			c.flushBatch()
			c.chunks.deltas.release()
		}
		if answer != nil {
			return nil
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

// handleLine classifies one line and acts on it: it queues a message or
// reports the line as bad, or returns an answer to one of our calls for
// jsonrpc2. A malformed request whose id can be recovered is skipped and
// answered with an error (see salvage).
func (c *Conn) handleLine(line []byte) []byte {
	if m := c.fastLine(line); m != nil {
		c.enqueue(m)
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
		m.update, m.params, m.size, m.src = &n, nil, queuedSize(size, true), rawSource{raw: params}
	}
	c.enqueue(m)
}

// inboundResponse returns an answer for jsonrpc2, in a form it cannot
// choke on: an id that cannot be one of ours is a bad line, and an error
// object is read leniently. What came before the answer is queued first,
// so onAnswer's barrier counts it.
func (c *Conn) inboundResponse(env *envelope, line []byte) []byte {
	if _, ok := parseOurID(env.ID); !ok {
		c.badLine("response to no pending request (id "+string(env.ID)+")", line)
		return nil
	}
	if !c.lines.lineOwned() {
		// A flush that waits for room may give the buffer away (park).
		line = bytes.Clone(line)
	}
	c.answerLine = line
	c.flushBatch() // the barrier counts what came before the answer
	if env.Error == nil {
		return line
	}
	b, err := json.Marshal(struct {
		ID    json.RawMessage `json:"id"`
		Error *Error          `json:"error"`
	}{env.ID, decodeWireError(env.Error)})
	if err != nil {
		c.badLine("malformed error: "+err.Error(), line)
		return nil
	}
	return b
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
