package bridge

import "unicode/utf8"

// jsonPlain marks the bytes encoding/json copies into a string as they
// are: printable ASCII (DEL included) but for the quote, the backslash and
// the HTML-sensitive '<', '>' and '&', which it escapes. Bytes from 0x80
// up are UTF-8, checked rune by rune.
var jsonPlain = func() (plain [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		plain[c] = true
	}
	for _, c := range `"\<>&` {
		plain[c] = false
	}
	return plain
}()

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string, byte for byte as
// encoding/json writes it: with its short escapes, \u00XX for other
// control bytes and for '<', '>' and '&', \ufffd for each byte that is not
// UTF-8, and \u2028 and \u2029 escaped. Runs of plain bytes, most of any
// text, are copied whole; a table lookup per byte finds where they end.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if jsonPlain[c] {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			b = appendEscapedByte(append(b, s[start:i]...), c)
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(append(b, s[start:i]...), `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(append(b, s[start:i]...), `\u202`...)
			b = append(b, hexDigits[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// appendEscapedByte appends the escape of an ASCII byte that is not plain.
func appendEscapedByte(b []byte, c byte) []byte {
	switch c {
	case '"', '\\':
		return append(b, '\\', c)
	case '\b':
		return append(b, '\\', 'b')
	case '\f':
		return append(b, '\\', 'f')
	case '\n':
		return append(b, '\\', 'n')
	case '\r':
		return append(b, '\\', 'r')
	case '\t':
		return append(b, '\\', 't')
	}
	return append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
}
