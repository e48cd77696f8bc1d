package bridge

import (
	"math/bits"
	"slices"
	"unicode/utf8"
)

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
// text, are found eight bytes at a time (notPlainIn) and copied whole.
func appendJSONString(b []byte, s string) []byte {
	b = append(slices.Grow(b, len(s)+2), '"') // plain text needs no more
	start := 0
	for i := 0; i < len(s); {
		// Find the next byte that is not plain: eight bytes at a time,
		// sixteen while the text is plain, then through the table.
		if i+8 <= len(s) {
			m := notPlainIn(load64(s, i))
			if m == 0 && i+16 <= len(s) {
				i += 8
				m = notPlainIn(load64(s, i))
			}
			if m == 0 {
				i += 8
				continue
			}
			i += bits.TrailingZeros64(m) / 8
		} else if jsonPlain[s[i]] {
			i++
			continue
		}
		c := s[i]
		if c < utf8.RuneSelf {
			b = appendEscapedByte(append(b, s[start:i]...), c)
			i++
			start = i
			continue
		}
		b, start, i = appendUTF8(b, s, start, i)
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// appendUTF8 goes through the bytes from 0x80 up at s[i:], rune by rune,
// escaping as appendJSONString describes, with s[start:i] not yet
// appended; it returns where it stopped and what is still to append.
func appendUTF8(b []byte, s string, start, i int) (_ []byte, newStart, end int) {
	for i < len(s) && s[i] >= utf8.RuneSelf {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(append(b, s[start:i]...), `\ufffd`...)
			start = i + size
		case r == '\u2028' || r == '\u2029':
			b = append(append(b, s[start:i]...), `\u202`...)
			b = append(b, hexDigits[r&0xf])
			start = i + size
		}
		i += size
	}
	return b, start, i
}

// Bytes repeated across a word: 0x01 and 0x80 in each of its eight bytes.
const (
	wordLow  = 0x0101010101010101
	wordHigh = 0x8080808080808080
)

// notPlainIn returns x, eight bytes of text read little-endian, with the
// high bit set in the first byte that is not plain, and nothing set before
// it (bytes after it may be flagged or not): 0 when all eight are plain.
// A byte below 0x20 wraps when 0x20 is taken from it, one that equals a
// special byte wraps when 1 is taken from its difference to it, and one
// from 0x80 up has the bit already; a borrow only runs up from a byte that
// wrapped, so the first flagged byte is a match. '<' and '>' differ in one
// bit, as do '"' and '&': each pair is one test.
func notPlainIn(x uint64) uint64 {
	angle := (x ^ '<'*wordLow) &^ (2 * wordLow)
	quoteAmp := (x ^ '"'*wordLow) &^ (4 * wordLow)
	backslash := x ^ '\\'*wordLow
	return (x | (x - 0x20*wordLow) | (angle - wordLow) | (quoteAmp - wordLow) | (backslash - wordLow)) & wordHigh
}

// load64 reads s[i:i+8] as a little-endian word (one load on the
// platforms that allow it).
func load64(s string, i int) uint64 {
	s = s[i : i+8]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
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
