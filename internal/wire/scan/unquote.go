package scan

import (
	"bytes"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// The JSON string helpers acpclient's fs/write_text_file serving uses on
// the content literal encoding/json has validated: its size before it is
// decoded, and a check that it stands for real characters.

// BadUnicode returns the offset in the JSON string literal lit (validated by
// encoding/json) of the first byte that does not decode to the character it
// stands for: invalid UTF-8, or a \u escape of a surrogate that is not part
// of a pair. It returns -1 when every character is real.
func BadUnicode(lit []byte) int {
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

// UnquotedLen returns the length of the decoded JSON string literal lit,
// which encoding/json has validated: the length Unquote will give it.
func UnquotedLen(lit []byte) int {
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

// Unquote decodes the JSON string literal lit, n bytes once decoded
// (UnquotedLen), into one allocation of exactly n bytes, as encoding/json
// decodes it.
func Unquote(lit []byte, n int) string {
	b := appendString(make([]byte, 0, n), lit, span{start: 1, end: len(lit) - 1})
	return unsafe.String(unsafe.SliceData(b), len(b))
}
