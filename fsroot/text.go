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

// textChecker runs checkText over a file as it is read, piece by piece, so
// each piece is checked while it is still in the CPU cache instead of in a
// second pass over the whole file. It reports the same first bad offset as
// checkText over the whole.
type textChecker struct {
	// done is how many bytes from the start have been checked.
	done int
}

// check checks the bytes of text that arrived since the last call. A rune
// cut off by the end of text waits for the next piece, unless final says
// nothing follows.
func (c *textChecker) check(text string, final bool) error {
	end := len(text)
	if !final {
		end = completeRunes(text, c.done)
	}
	if err := checkText(text[c.done:end]); err != nil {
		err.(*NotTextError).Offset += c.done
		return err
	}
	c.done = end
	return nil
}

// completeRunes returns len(text), less a last rune that starts at or
// after from and lacks bytes that may still come.
func completeRunes(text string, from int) int {
	for i := len(text) - 1; i >= from && i >= len(text)-utf8.UTFMax+1; i-- {
		if c := text[i]; c < utf8.RuneSelf {
			return len(text)
		} else if utf8.RuneStart(c) {
			if utf8.FullRuneInString(text[i:]) {
				return len(text)
			}
			return i
		}
	}
	return len(text)
}
