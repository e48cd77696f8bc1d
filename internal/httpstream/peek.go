package httpstream

import (
	"encoding/json"
)

// maxID is the longest id or session id kept, quotes included; the draft's
// reference server refuses longer ones.
const maxID = 1024 + 2

// peek follows a JSON-RPC message as its bytes pass and keeps only what
// routing it needs: its id, its method, and the session it names
// (params.sessionId of a request or notification, result.sessionId of a
// response). Nothing else is kept, so a message of any size costs a few
// hundred bytes here. Bytes that are not JSON leave it knowing nothing.
type peek struct {
	depth     int
	kinds     [3]byte    // the container at depths 1 and 2: '{' or '['
	keys      [3]keyName // the last key read at depths 1 and 2
	expectKey bool       // the next string at depth 1 or 2 is a key
	inStr     bool
	esc       bool
	keying    bool // the current string is a key at depth 1 or 2
	scalar    bool // capturing a number or a literal

	capture *[]byte // the value being captured, nil if none
	over    bool    // it was longer than maxID

	id, method, session []byte // raw JSON values
	hasID, hasMethod    bool
}

type keyName struct {
	b    [16]byte
	n    int
	over bool
}

func (k *keyName) is(s string) bool { return !k.over && string(k.b[:k.n]) == s }

// Write passes the message's next bytes.
func (p *peek) Write(b []byte) (int, error) {
	for _, c := range b {
		p.byte(c)
	}
	return len(b), nil
}

func (p *peek) byte(c byte) {
	if p.inStr {
		if p.capture != nil {
			p.add(c)
		}
		if p.keying && !p.esc && c != '"' && c != '\\' {
			k := &p.keys[p.depth]
			if k.n < len(k.b) {
				k.b[k.n] = c
				k.n++
			} else {
				k.over = true
			}
		}
		switch {
		case p.esc:
			p.esc = false
			if p.keying {
				p.keys[p.depth].over = true // an escaped key is none routing needs
			}
		case c == '\\':
			p.esc = true
		case c == '"':
			p.inStr, p.keying = false, false
			p.capture = nil
		}
		return
	}
	if p.scalar {
		switch c {
		case ',', '}', ']', ' ', '\t', '\n', '\r', ':':
			p.scalar, p.capture = false, nil
		default:
			if p.capture != nil { // nil once it was too long
				p.add(c)
			}
			return
		}
	}
	switch c {
	case ' ', '\t', '\n', '\r':
	case '{', '[':
		p.depth++
		if p.depth <= 2 {
			p.kinds[p.depth] = c
			p.keys[p.depth] = keyName{}
			p.expectKey = c == '{'
		}
	case '}', ']':
		p.depth = max(p.depth-1, 0) // not JSON if it would go below
		p.expectKey = false
	case ',':
		if p.depth >= 1 && p.depth <= 2 && p.kinds[p.depth] == '{' {
			p.expectKey = true
		}
	case ':':
		p.expectKey = false
	case '"':
		p.inStr = true
		if p.depth >= 1 && p.depth <= 2 && p.kinds[p.depth] == '{' && p.expectKey {
			p.keying = true
			p.keys[p.depth] = keyName{}
			return
		}
		p.start(c)
	default:
		if p.start(c) {
			p.scalar = true
		}
	}
}

// start begins capturing a value whose first byte is c, if routing needs
// it, and says whether it did.
func (p *peek) start(c byte) bool {
	var dst *[]byte
	switch {
	case p.depth == 1 && p.kinds[1] == '{' && p.keys[1].is("id"):
		dst, p.hasID = &p.id, true
	case p.depth == 1 && p.kinds[1] == '{' && p.keys[1].is("method"):
		dst, p.hasMethod = &p.method, true
	case p.depth == 2 && p.kinds[1] == '{' && p.kinds[2] == '{' && p.keys[2].is("sessionId") &&
		(p.keys[1].is("params") || p.keys[1].is("result")):
		dst = &p.session
	default:
		return false
	}
	*dst = (*dst)[:0]
	p.capture, p.over = dst, false
	p.add(c)
	return true
}

func (p *peek) add(c byte) {
	if len(*p.capture) >= maxID {
		p.over = true
		*p.capture = (*p.capture)[:0]
		p.capture = nil
		return
	}
	*p.capture = append(*p.capture, c)
}

// message is what a peek learned of one message.
type message struct {
	id      string // a key for the id: its JSON text, strings decoded; "" if none
	rawID   []byte // the id as sent
	method  string
	session string
}

func (m message) isRequest() bool  { return m.method != "" && m.id != "" }
func (m message) isResponse() bool { return m.method == "" && m.id != "" }

// result is what the message said, and resets p for the next one.
func (p *peek) result() message {
	var m message
	if p.hasMethod {
		json.Unmarshal(p.method, &m.method)
	}
	if p.hasID && len(p.id) > 0 {
		var s string
		if p.id[0] == '"' {
			if json.Unmarshal(p.id, &s) == nil {
				m.id = "s:" + s
			}
		} else if json.Valid(p.id) {
			m.id = "n:" + string(p.id)
		}
		if m.id != "" {
			m.rawID = append([]byte(nil), p.id...)
		}
	}
	if len(p.session) > 0 && p.session[0] == '"' {
		json.Unmarshal(p.session, &m.session)
	}
	id, method, session := p.id[:0], p.method[:0], p.session[:0]
	*p = peek{id: id, method: method, session: session}
	return m
}
