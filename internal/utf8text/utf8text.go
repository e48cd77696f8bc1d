// Package utf8text finds where text stops being valid UTF-8, for the
// errors of acpclient and fsroot that refuse such text.
//
// Valid text, the usual case, is recognised a vector at a time on amd64
// with AVX2 or AVX-512 (the lookup algorithm of Keiser and Lemire, in
// valid_amd64.s), some ten times as fast as utf8.ValidString on text in
// other scripts, which is what a large file read would otherwise spend
// most of its time on; the ends of text, other CPUs and the purego build
// tag use utf8.ValidString. Invalid text is then decoded rune by rune to
// find the offset. The vector checks are tested against utf8.ValidString
// byte pair by byte pair at their block edges, and fuzzed.
package utf8text

import (
	"unicode/utf8"
	"unsafe"
)

// InvalidOffset returns the byte offset of the first invalid UTF-8
// sequence in s, or -1 when s is valid UTF-8.
func InvalidOffset(s string) int {
	if valid(s) {
		return -1
	}
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size <= 1 {
			return i
		}
		i += size
	}
	return -1
}

// blockCheck is a vector check of whole blocks of size bytes.
type blockCheck struct {
	name  string
	size  int
	valid func(p *byte, n int) bool
}

// minVector is the length from which a vector check pays for its set-up.
const minVector = 128

// valid reports whether s is valid UTF-8, as utf8.ValidString does, a
// vector at a time where the CPU has AVX2 or AVX-512: text in other scripts
// is checked at ten times the speed of a rune-by-rune decoder, ASCII at
// about the same.
func valid(s string) bool {
	if len(vectorChecks) == 0 || len(s) < minVector {
		return utf8.ValidString(s)
	}
	return validWith(vectorChecks[0], s)
}

// validWith checks s with check, and its end, which may cut a rune short of
// a block, with utf8.ValidString. len(s) >= check.size.
func validWith(check blockCheck, s string) bool {
	blocks := len(s) / check.size * check.size
	if !check.valid(unsafe.StringData(s), blocks) {
		return false
	}
	// The blocks are valid up to their last rune, which may continue past
	// them: check from its first byte on.
	last := lastRuneStart(s[:blocks])
	return last >= 0 && utf8.ValidString(s[last:])
}

// lastRuneStart returns the index of the last byte of s that is not a
// continuation byte, looking no further back than a rune's length, or -1.
func lastRuneStart(s string) int {
	for i := len(s) - 1; i >= 0 && i >= len(s)-utf8.UTFMax; i-- {
		if s[i]&0xc0 != 0x80 {
			return i
		}
	}
	return -1
}
