// Package utf8text finds where text stops being valid UTF-8, for the
// errors of acpclient and fsroot that refuse such text.
package utf8text

import "unicode/utf8"

// InvalidOffset returns the byte offset of the first invalid UTF-8
// sequence in s, or -1 when s is valid UTF-8.
func InvalidOffset(s string) int {
	if utf8.ValidString(s) {
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
