package fsroot

import (
	"errors"
	"io"
	"slices"
	"unsafe"
)

// ownedString returns the bytes of b as a string without copying them. b
// must be held by no one else and never written again: readFile's buffers
// are, so a whole file is in memory once, not twice.
func ownedString(b []byte) string {
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// readAllCapped reads r to its end into one buffer sized for the size the
// file was measured at, so the bytes are copied once, straight from the
// source, and checks that they are UTF-8 text (a *NotTextError otherwise).
// A file that has grown since is still read, up to max; past max it fails
// with ErrTooLarge. piece > 0 bounds each Read, so that each piece is
// checked while it is in the cache; 0 reads as much as fits.
func readAllCapped(r io.Reader, size, max int64, piece int) ([]byte, error) {
	// One byte to spare, so that the end of a file that did not grow is
	// seen without growing the buffer.
	buf := make([]byte, 0, min(size, max)+1)
	var text textChecker
	for {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, len(buf)/2+1)
		}
		end := cap(buf)
		if piece > 0 {
			end = min(end, len(buf)+piece)
		}
		n, err := r.Read(buf[len(buf):end])
		buf = buf[:len(buf)+n]
		if int64(len(buf)) > max {
			return nil, tooLarge(int64(len(buf)), max)
		}
		eof := errors.Is(err, io.EOF)
		if err != nil && !eof {
			return nil, err
		}
		if err := text.check(ownedString(buf), eof); err != nil {
			return nil, err
		}
		if eof {
			return buf, nil
		}
	}
}
