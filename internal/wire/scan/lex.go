package scan

import (
	"encoding/binary"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// The JSON lexing of the chunk scanner (chunkscan.go): strings, numbers,
// literals and skipped values, each validated as encoding/json would.

// strValue reads a string value; any other value fails.
func (s *chunkScan) strValue() (span, bool) {
	if s.peek() != '"' {
		return span{}, false
	}
	return s.str()
}

// strEquals reports whether the next value is a string equal to want,
// written without escapes.
func (s *chunkScan) strEquals(want string) bool {
	sp, ok := s.strValue()
	return ok && sp.plain && string(s.b[sp.start:sp.end]) == want
}

// strSafe marks the bytes that can appear unescaped in a JSON string and need
// no attention: printable ASCII other than '"' and '\\'.
var strSafe = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// strWordSpecial reports whether any of the 8 bytes in x needs str's
// attention (is not strSafe), so that str can pass over long runs of text
// 8 bytes at a time. A byte with its high bit set is caught by "| x"; for
// the others, subtracting 0x20, or 1 after xor with '"' or '\\', sets the
// high bit exactly when the byte is a control character, '"' or '\\'
// (a borrow only spreads upwards from a byte that is already caught).
func strWordSpecial(x uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	return ((x-ones*0x20)|((x^(ones*'"'))-ones)|((x^(ones*'\\'))-ones)|x)&highs != 0
}

// str reads the string whose '"' is next, validating its escapes and that it
// has no control characters.
func (s *chunkScan) str() (span, bool) {
	b := s.b
	i := s.i + 1
	start := i
	plain, high := true, false
	for {
		for i+8 <= len(b) && !strWordSpecial(binary.LittleEndian.Uint64(b[i:])) {
			i += 8
		}
		for i < len(b) && strSafe[b[i]] {
			i++
		}
		if i >= len(b) {
			return span{}, false
		}
		switch c := b[i]; {
		case c == '"':
			s.i = i + 1
			sp := span{start: start, end: i, plain: plain, ascii: plain && !high}
			if plain && high {
				sp.plain = utf8.Valid(b[start:i])
			}
			return sp, true
		case c == '\\':
			plain = false
			if i+1 >= len(b) {
				return span{}, false
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(b) || hex4(b[i+2:i+6]) < 0 {
					return span{}, false
				}
				i += 6
			default:
				return span{}, false
			}
		case c < 0x20:
			return span{}, false
		default: // non-ASCII
			high = true
			i++
		}
	}
}

// hex4 decodes four hex digits, or returns -1.
func hex4(b []byte) rune {
	var r rune
	for _, c := range b[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r<<4 | rune(c)
	}
	return r
}

// literal consumes the literal word (true, false or null).
func (s *chunkScan) literal(word string) bool {
	if len(s.b)-s.i >= len(word) && string(s.b[s.i:s.i+len(word)]) == word {
		s.i += len(word)
		return true
	}
	return false
}

// number consumes a number per the JSON grammar.
func (s *chunkScan) number() bool {
	b, i := s.b, s.i
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		for i++; i < len(b) && '0' <= b[i] && b[i] <= '9'; i++ {
		}
	default:
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			return false
		}
		for i++; i < len(b) && '0' <= b[i] && b[i] <= '9'; i++ {
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			return false
		}
		for i++; i < len(b) && '0' <= b[i] && b[i] <= '9'; i++ {
		}
	}
	s.i = i
	return true
}

// skip validates and skips any value (whitespace before it already skipped).
func (s *chunkScan) skip() bool {
	var stack [maxChunkScanDepth / 64]uint64 // bit set: object
	depth := 0
	for {
		// A value.
		s.ws()
		if s.i >= len(s.b) {
			return false
		}
		switch c := s.b[s.i]; c {
		case '{', '[':
			s.i++
			s.ws()
			if c == '{' && s.peek() == '}' || c == '[' && s.peek() == ']' {
				s.i++
				break
			}
			if depth == maxChunkScanDepth {
				return false
			}
			if c == '{' {
				stack[depth/64] |= 1 << (depth % 64)
				if !s.key() {
					return false
				}
			} else {
				stack[depth/64] &^= 1 << (depth % 64)
			}
			depth++
			continue
		case '"':
			if _, ok := s.str(); !ok {
				return false
			}
		case 't':
			if !s.literal("true") {
				return false
			}
		case 'f':
			if !s.literal("false") {
				return false
			}
		case 'n':
			if !s.literal("null") {
				return false
			}
		default:
			if !s.number() {
				return false
			}
		}
		// After a value: close containers, or move to the next element.
		for {
			if depth == 0 {
				return true
			}
			obj := stack[(depth-1)/64]&(1<<((depth-1)%64)) != 0
			s.ws()
			c := s.peek()
			if c == ',' {
				s.i++
				if obj && !s.key() {
					return false
				}
				break
			}
			if obj && c == '}' || !obj && c == ']' {
				s.i++
				depth--
				continue
			}
			return false
		}
	}
}

// key reads an object key and its colon.
func (s *chunkScan) key() bool {
	s.ws()
	if s.peek() != '"' {
		return false
	}
	if _, ok := s.str(); !ok {
		return false
	}
	return s.consume(':')
}

// appendString appends the decoded string at sp to dst, exactly as
// encoding/json decodes it: escapes resolved, surrogate pairs combined, and
// lone surrogates and invalid UTF-8 bytes replaced by U+FFFD. The escapes
// were validated by str. The decoded string is at most maxDecoded of the
// span's length.
func appendString(dst []byte, b []byte, sp span) []byte {
	s := b[sp.start:sp.end]
	if sp.plain {
		return append(dst, s...)
	}
	for i := 0; i < len(s); {
		j := i
		for j < len(s) {
			c := s[j]
			if c == '\\' {
				break
			}
			if c < utf8.RuneSelf {
				j++
				continue
			}
			r, size := utf8.DecodeRune(s[j:])
			if r == utf8.RuneError && size == 1 {
				break
			}
			j += size
		}
		dst = append(dst, s[i:j]...)
		i = j
		if i >= len(s) {
			break
		}
		if s[i] != '\\' { // an invalid UTF-8 byte
			dst = utf8.AppendRune(dst, unicode.ReplacementChar)
			i++
			continue
		}
		switch c := s[i+1]; c {
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			rr := hex4(s[i+2:])
			i += 6
			if utf16.IsSurrogate(rr) {
				rr1 := rune(-1)
				if i+6 <= len(s) && s[i] == '\\' && s[i+1] == 'u' {
					rr1 = hex4(s[i+2:])
				}
				if dec := utf16.DecodeRune(rr, rr1); dec != unicode.ReplacementChar {
					i += 6
					dst = utf8.AppendRune(dst, dec)
					continue
				}
				rr = unicode.ReplacementChar
			}
			dst = utf8.AppendRune(dst, rr)
			continue
		default: // '"', '\\', '/'
			dst = append(dst, c)
		}
		i += 2
	}
	return dst
}

// maxDecoded is how many times its length a JSON string's contents can
// take once decoded: an invalid UTF-8 byte becomes U+FFFD, three bytes;
// nothing else grows.
const maxDecoded = 3
