package fsroot

import "github.com/acphost/acphost/internal/utf8text"

// checkText refuses text that is not valid UTF-8, naming the offset of the
// first bad byte. A BOM, CRLF and NUL are all valid UTF-8 and pass.
func checkText(text string) error {
	if i := utf8text.InvalidOffset(text); i >= 0 {
		return &NotTextError{Offset: i}
	}
	return nil
}
