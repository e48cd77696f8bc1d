package acpclient

import (
	"bytes"
	"encoding/json"
	"errors"
)

// salvaged is what a tolerant scan of a malformed line's top-level object
// recovered before the first syntax error.
type salvaged struct {
	id        json.RawMessage // a number or string id, compact; nil if none
	method    string          // the method, when its value was a string
	hasMethod bool
	response  bool // a "result" or "error" key: a response, never answered
}

// answerable reports whether the line was a request to us whose id we know,
// so the agent is owed an answer instead of waiting forever.
func (s salvaged) answerable() bool {
	return s.id != nil && s.hasMethod && !s.response
}

// salvage scans the top-level keys of line token by token, stopping at the
// first error, so a request with a syntax error late in its params still
// yields its id and method.
func salvage(line []byte) salvaged {
	var s salvaged
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return s
	}
	for dec.More() {
		k, err := dec.Token()
		key, ok := k.(string)
		if err != nil || !ok {
			return s
		}
		switch key {
		case "method":
			s.hasMethod = true
		case "result", "error":
			s.response = true
		}
		v, err := dec.Token()
		if err != nil {
			return s
		}
		switch key {
		case "id":
			s.id = scalarID(v)
		case "method":
			s.method, _ = v.(string)
		}
		if d, ok := v.(json.Delim); ok && (d == '{' || d == '[') && skipNested(dec) != nil {
			return s
		}
	}
	return s
}

// scalarID returns a number or string token as a compact JSON id, or nil
// for anything else (null, bool, object, array are not ids).
func scalarID(v json.Token) json.RawMessage {
	switch v := v.(type) {
	case json.Number:
		return json.RawMessage(v)
	case string:
		b, _ := json.Marshal(v)
		return b
	}
	return nil
}

// skipNested consumes tokens up to the close of an object or array whose
// opening delimiter was just read.
func skipNested(dec *json.Decoder) error {
	for depth := 1; depth > 0; {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		if d, ok := t.(json.Delim); ok {
			if d == '{' || d == '[' {
				depth++
			} else {
				depth--
			}
		}
	}
	return nil
}

// malformedRequestError is the answer owed to a request line that did not
// decode: -32700 when it is not JSON, -32600 when it is JSON of the wrong
// shape (a method that is not a string, say).
func malformedRequestError(s salvaged, err error) *Error {
	code, what := CodeInvalidRequest, "invalid request"
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		code, what = CodeParseError, "parse error"
	}
	if s.method != "" {
		return NewError(code, "%s in %s request: %v", what, s.method, err)
	}
	return NewError(code, "%s: %v", what, err)
}

// answerMalformed queues the error answer for a malformed request, in stream
// order like any other request's answer; the dispatcher sends it.
func (c *Conn) answerMalformed(s salvaged, err error, size int) {
	id := compactID(s.id)
	c.enqueue(&inbound{id: id, req: c.newInboundRequest(id), reject: malformedRequestError(s, err), size: queuedSize(size, false)})
}
