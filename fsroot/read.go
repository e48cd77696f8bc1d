package fsroot

import (
	"errors"
	"io"
	"strings"
)

// readAllCapped reads r to its end and returns what it read, checked to be
// UTF-8 text (a *NotTextError otherwise). A file that has grown since it
// was measured at size is still read, up to max; past max it fails with
// ErrTooLarge.
//
// Each Read brings at most piece bytes into a scratch buffer, where they
// are checked while they are in the cache and from where they are appended
// to the text. The text is a strings.Builder grown to size at the start,
// so the file is in memory once and its buffer is never zeroed first:
// appending a piece that is still in the cache costs less than clearing
// the whole buffer would, so the read as a whole, check included, keeps up
// with os.ReadFile, which clears its buffer and then reads into it.
func readAllCapped(r io.Reader, size, max int64, piece int) (string, error) {
	var text strings.Builder
	// One byte to spare, so that the end of a file that did not grow is
	// seen without growing the buffer.
	want := min(size, max) + 1
	text.Grow(int(want))
	scratch := make([]byte, min(int64(piece), want))
	var check textChecker
	for {
		n, err := r.Read(scratch)
		text.Write(scratch[:n])
		if int64(text.Len()) > max {
			return "", tooLarge(int64(text.Len()), max)
		}
		eof := errors.Is(err, io.EOF)
		if err != nil && !eof {
			return "", err
		}
		if err := check.check(text.String(), eof); err != nil {
			return "", err
		}
		if eof {
			return text.String(), nil
		}
	}
}
