// Package sse reads a text/event-stream (server-sent events) as the ACP
// remote transport draft's Streamable HTTP profile uses it: every event's
// data is one JSON-RPC message. A Reader streams each event's data as it
// arrives, so an event's size costs no memory here; whoever reads the
// data bounds it.
package sse

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// maxField is the longest field name kept; a longer one is no field this
// reader uses, so its line is skipped.
const maxField = 16

// Reader reads the events of one stream.
type Reader struct {
	br *bufio.Reader

	started bool // the byte order mark, if any, was skipped
	afterCR bool // the last line ended with CR: a LF that follows belongs to it
}

// NewReader returns a Reader of r.
func NewReader(r io.Reader) *Reader {
	return &Reader{br: bufio.NewReaderSize(r, 32<<10)}
}

// Next reads up to the end of the next event that has data, passing the
// data to w as it arrives: the value of each data line, with one space
// between lines where the standard puts a line feed (the data is JSON,
// in which the two are the same whitespace). Comments, events without
// data, and the fields other than data (event, id, retry) are skipped.
//
// Next returns nil when an event ends, io.EOF when the stream ends (and
// with it any event it cut short; w has had its data), or the error of
// the underlying reader or of w.
func (r *Reader) Next(w io.Writer) error {
	if !r.started {
		r.started = true
		if b, err := r.br.Peek(3); err == nil && bytes.Equal(b, []byte("\xEF\xBB\xBF")) {
			r.br.Discard(3)
		}
	}
	lines := 0 // data lines of this event
	for {
		c, err := r.br.ReadByte()
		if err != nil {
			return eof(err)
		}
		if r.afterCR {
			r.afterCR = false
			if c == '\n' {
				continue
			}
		}
		if c == '\r' || c == '\n' { // a blank line ends the event
			r.afterCR = c == '\r'
			if lines > 0 {
				return nil
			}
			continue
		}
		name, colon, err := r.field(c)
		if err != nil {
			return eof(err)
		}
		if name != "data" {
			if !colon {
				continue // the line ended with its name
			}
			if err := r.skipLine(); err != nil {
				return eof(err)
			}
			continue
		}
		if lines > 0 {
			if _, err := w.Write([]byte{' '}); err != nil {
				return err
			}
		}
		lines++
		if !colon {
			continue // "data" alone: an empty value, its line ended
		}
		if b, err := r.br.Peek(1); err == nil && b[0] == ' ' {
			r.br.Discard(1)
		}
		if err := r.copyLine(w); err != nil {
			return eof(err)
		}
	}
}

// field reads a line's field name, whose first byte is c, and its colon.
// colon is false when the line ended without one (the line's end is then
// consumed); a name longer than maxField is returned cut, with colon true
// as the rest of its line is still to skip, and matches no field.
func (r *Reader) field(c byte) (name string, colon bool, err error) {
	var buf [maxField + 1]byte
	n := 0
	for {
		switch c {
		case ':':
			return string(buf[:n]), true, nil
		case '\r', '\n':
			r.afterCR = c == '\r'
			return string(buf[:n]), false, nil
		}
		if n == len(buf) {
			r.br.UnreadByte()
			return string(buf[:n]), true, nil
		}
		buf[n] = c
		n++
		if c, err = r.br.ReadByte(); err != nil {
			return "", false, err
		}
	}
}

// copyLine passes the rest of the line to w and consumes its end.
func (r *Reader) copyLine(w io.Writer) error {
	for {
		buf, err := r.br.Peek(1)
		if err != nil {
			return err
		}
		buf, _ = r.br.Peek(r.br.Buffered())
		i := bytes.IndexAny(buf, "\r\n")
		if i < 0 {
			if _, err := w.Write(buf); err != nil {
				return writeError{err}
			}
			r.br.Discard(len(buf))
			continue
		}
		if i > 0 {
			if _, err := w.Write(buf[:i]); err != nil {
				return writeError{err}
			}
		}
		r.afterCR = buf[i] == '\r'
		r.br.Discard(i + 1)
		return nil
	}
}

// skipLine consumes the rest of the line.
func (r *Reader) skipLine() error {
	for {
		buf, err := r.br.Peek(1)
		if err != nil {
			return err
		}
		buf, _ = r.br.Peek(r.br.Buffered())
		if i := bytes.IndexAny(buf, "\r\n"); i >= 0 {
			r.afterCR = buf[i] == '\r'
			r.br.Discard(i + 1)
			return nil
		}
		r.br.Discard(len(buf))
	}
}

// writeError is an error of the data's writer, passed back as it is.
type writeError struct{ err error }

func (e writeError) Error() string { return e.err.Error() }

// eof unwraps a writer's error and passes the reader's through.
func eof(err error) error {
	var we writeError
	if errors.As(err, &we) {
		return we.err
	}
	return err
}
