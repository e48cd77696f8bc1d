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
// Each Read brings at most piece (> 0) bytes into a scratch buffer, from
// where they go to a textSink while they are in the cache.
func readAllCapped(r io.Reader, size, max int64, piece int) (string, error) {
	sink := newTextSink(size, max)
	scratch := make([]byte, min(int64(piece), sink.measure))
	for {
		n, err := r.Read(scratch)
		if _, err := sink.Write(scratch[:n]); err != nil {
			return "", err
		}
		if int64(sink.text.Len()) >= sink.measure && len(scratch) < piece {
			// The file has grown past its measure; read the rest in
			// whole pieces, not in pieces of the size it had.
			scratch = make([]byte, piece)
		}
		if errors.Is(err, io.EOF) {
			return sink.end()
		}
		if err != nil {
			return "", err
		}
	}
}

// textSink collects a file's text as it arrives, refusing it past max
// bytes and checking each piece for UTF-8 as it is written, while it is
// still in the cache rather than in a second pass over the whole.
//
// The text is a strings.Builder grown at the start to the size the file
// was measured at, so the file is in memory once and its buffer is never
// zeroed: appending a piece that is in the cache costs less than clearing
// the whole buffer would, and a local read as a whole, check included,
// keeps up with os.ReadFile, which clears its buffer and then reads into it.
type textSink struct {
	text  strings.Builder
	max   int64
	check textChecker
	// measure is the room made at the start: the measured size, at most
	// max, and one byte to spare, so that the end of a file that did not
	// grow is seen without growing the buffer.
	measure int64
}

func newTextSink(size, max int64) *textSink {
	s := &textSink{max: max, measure: min(size, max) + 1}
	s.text.Grow(int(s.measure))
	return s
}

func (s *textSink) Write(p []byte) (int, error) {
	s.text.Write(p)
	if int64(s.text.Len()) > s.max {
		return 0, tooLarge(int64(s.text.Len()), s.max)
	}
	return len(p), s.check.check(s.text.String(), false)
}

// end returns the text, once the file has been read to its end.
func (s *textSink) end() (string, error) {
	if err := s.check.check(s.text.String(), true); err != nil {
		return "", err
	}
	return s.text.String(), nil
}
