package fsroot

import "unicode/utf8"

// checkText refuses text that is not valid UTF-8, naming the offset of the
// first bad byte. A BOM, CRLF and NUL are all valid UTF-8 and pass.
func checkText(text string) error {
	if utf8.ValidString(text) {
		return nil
	}
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		if r == utf8.RuneError && size <= 1 {
			return &NotTextError{Offset: i}
		}
		i += size
	}
	return nil
}
