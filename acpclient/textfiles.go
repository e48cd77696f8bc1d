package acpclient

import (
	"bytes"
	"context"
	"encoding/json"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// TextFileWriteLimiter is implemented by a TextFileWriter that caps the
// content it accepts. Conn asks it before decoding a write's content and
// refuses a larger write with -32602, so the content is never held in
// memory a second time only to be refused.
type TextFileWriteLimiter interface {
	// MaxTextFileWrite returns the largest content, in bytes, accepted
	// for the session; 0 or less means no cap.
	MaxTextFileWrite(sessionID string) int64
}

// writeTextFileParams is WriteTextFileRequest with the content left raw, so
// its decoded size can be measured first and the string built in one
// allocation of exactly that size.
type writeTextFileParams struct {
	SessionID string          `json:"sessionId"`
	Path      string          `json:"path"`
	Content   rawRef          `json:"content"`
	Meta      json.RawMessage `json:"_meta,omitempty"`
}

// serveWriteTextFile decodes and serves fs/write_text_file.
func (c *Conn) serveWriteTextFile(ctx context.Context, h TextFileWriter, m *inbound, reply func(any, error)) {
	var p writeTextFileParams
	if !c.decodeParams(m, &p) {
		return
	}
	// No leniency here, unlike elsewhere: taking content that is missing or
	// not a string for "" would empty the file.
	lit := bytes.TrimSpace(p.Content)
	if len(lit) < 2 || lit[0] != '"' {
		reply(nil, NewError(CodeInvalidParams, "fs/write_text_file %s: content must be a string; nothing was written", p.Path))
		return
	}
	if off := badUnicode(lit); off >= 0 {
		// encoding/json would write U+FFFD in place of these bytes: the file
		// would silently hold other text than the agent sent.
		reply(nil, NewError(CodeInvalidParams,
			"fs/write_text_file %s: content is not valid Unicode (invalid UTF-8 or an unpaired surrogate at byte %d of the JSON string); nothing was written",
			p.Path, off))
		return
	}
	n := unquotedLen(lit)
	if l, ok := h.(TextFileWriteLimiter); ok {
		if limit := l.MaxTextFileWrite(p.SessionID); limit > 0 && int64(n) > limit {
			reply(nil, NewError(CodeInvalidParams,
				"fs/write_text_file %s: content of %d bytes is over the limit of %d bytes; nothing was written",
				p.Path, n, limit))
			return
		}
	}
	req := &WriteTextFileRequest{SessionID: p.SessionID, Path: p.Path, Content: unquote(lit, n), Meta: p.Meta}
	reply(nil, h.WriteTextFile(ctx, req))
}

// serveReadTextFile serves fs/read_text_file. The reader owns the rule
// that text which is not UTF-8 is refused rather than served (fsroot's
// roots, which every bridge session reads through, check the whole file
// as it is read): encoding/json would replace bad bytes with U+FFFD.
func (c *Conn) serveReadTextFile(ctx context.Context, h TextFileReader, m *inbound, reply func(any, error)) {
	var req ReadTextFileRequest
	if !c.decodeParams(m, &req) {
		return
	}
	reply(h.ReadTextFile(ctx, &req))
}

// badUnicode returns the offset in the JSON string literal lit (validated by
// encoding/json) of the first byte that does not decode to the character it
// stands for: invalid UTF-8, or a \u escape of a surrogate that is not part
// of a pair. It returns -1 when every character is real.
func badUnicode(lit []byte) int {
	for i := 1; i < len(lit)-1; {
		c := lit[i]
		switch {
		case c == '\\' && lit[i+1] == 'u':
			r := hex4(lit[i+2:])
			if !utf16.IsSurrogate(r) {
				i += 6
				continue
			}
			if r >= 0xDC00 || i+12 > len(lit)-1 || lit[i+6] != '\\' || lit[i+7] != 'u' ||
				utf16.DecodeRune(r, hex4(lit[i+8:])) == unicode.ReplacementChar {
				return i
			}
			i += 12
		case c == '\\':
			i += 2
		case c < utf8.RuneSelf:
			i++
		default:
			r, size := utf8.DecodeRune(lit[i:])
			if r == utf8.RuneError && size <= 1 {
				return i
			}
			i += size
		}
	}
	return -1
}

// unquotedLen returns the length of the decoded JSON string literal lit,
// which encoding/json has validated: the length appendString will give it.
func unquotedLen(lit []byte) int {
	s := lit[1 : len(lit)-1]
	n := 0
	for len(s) > 0 {
		i := bytes.IndexByte(s, '\\')
		if i < 0 {
			i = len(s)
		}
		n += plainLen(s[:i])
		s = s[i:]
		if len(s) < 2 {
			break
		}
		if s[1] != 'u' {
			n++
			s = s[2:]
			continue
		}
		r, rest := hex4(s[2:]), s[6:]
		if utf16.IsSurrogate(r) {
			r2 := rune(-1)
			if len(rest) >= 6 && rest[0] == '\\' && rest[1] == 'u' {
				r2 = hex4(rest[2:])
			}
			if dec := utf16.DecodeRune(r, r2); dec != unicode.ReplacementChar {
				r, rest = dec, rest[6:]
			} else {
				r = unicode.ReplacementChar
			}
		}
		n += utf8.RuneLen(r)
		s = rest
	}
	return n
}

// plainLen is the decoded length of bytes without escapes: each invalid
// UTF-8 byte becomes the three bytes of U+FFFD.
func plainLen(p []byte) int {
	if utf8.Valid(p) {
		return len(p)
	}
	n := 0
	for i := 0; i < len(p); {
		r, size := utf8.DecodeRune(p[i:])
		if r == utf8.RuneError && size == 1 {
			n += utf8.RuneLen(utf8.RuneError)
		} else {
			n += size
		}
		i += size
	}
	return n
}

// unquote decodes the JSON string literal lit, n bytes once decoded, into
// one allocation of exactly n bytes.
func unquote(lit []byte, n int) string {
	b := appendString(make([]byte, 0, n), lit, span{start: 1, end: len(lit) - 1})
	return unsafe.String(unsafe.SliceData(b), len(b))
}
