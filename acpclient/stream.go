package acpclient

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
)

// DefaultMaxLineBytes is the default cap on one incoming line. Lines carry
// whole images and replayed histories, so it is large; a line over the cap
// ends the connection with ErrLineTooLong.
const DefaultMaxLineBytes = 256 << 20

// BadLine describes an incoming line that was skipped: not JSON, not a
// JSON-RPC message, or a response nobody waits for. The connection stays up.
type BadLine struct {
	// Reason says why the line was skipped.
	Reason string
	// Line is the start of the line (at most 1 KiB), for diagnostics.
	Line []byte
	// Size is the length of the whole line.
	Size int
}

const badLineQuote = 1 << 10

// lineReader splits a byte stream into lines without a fixed buffer size:
// short lines are returned straight from bufio's buffer, long ones are
// assembled in chunks and joined once, into a buffer of exactly their size
// that the caller may keep. A line of N bytes so costs about 2N bytes of
// allocation, where a buffer grown by append costs up to 5N and pins the
// largest one.
//
// It starts with a small buffer, which is all an idle connection holds while
// its read goroutine waits, and moves to the full-size one when a line does
// not fit or once the connection has carried more than a few messages.
type lineReader struct {
	r   *bufio.Reader
	max int
	// owned reports that the last line returned is the caller's to keep:
	// it is not overwritten by the following call.
	owned bool
	// small says r is still the first buffer; seen counts the bytes read
	// through it.
	small bool
	seen  int
}

// Chunk sizes for long lines: an eighth of the line so far, at least
// bufio's buffer size and at most longChunkMax, so the unused tail of the
// last chunk stays small next to the line.
const (
	lineBufferSize  = 64 << 10
	longChunkMax    = 1 << 20
	firstBufferSize = 4 << 10
)

func newLineReader(r io.Reader, max int) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, firstBufferSize), max: max, small: true}
}

// grow moves to the full-size buffer. It reads through the small one, so
// what that has buffered comes first; bufio reads past an empty buffer
// straight into the caller's, so the extra layer costs no copy.
func (l *lineReader) grow() {
	l.r = bufio.NewReaderSize(l.r, lineBufferSize)
	l.small = false
}

// next returns the next non-blank line without its line ending. Unless
// lineOwned says otherwise, the slice is valid until the following call.
func (l *lineReader) next() ([]byte, error) {
	for {
		line, err := l.r.ReadSlice('\n')
		l.owned = false
		if l.small {
			if l.seen += len(line); l.seen > lineBufferSize || err == bufio.ErrBufferFull {
				l.grow() // line stays valid: readLong copies it before reading on
			}
		}
		if err == bufio.ErrBufferFull {
			line, err = l.readLong(line)
			l.owned = true
		}
		if len(line) > l.max+1 || (len(line) > l.max && line[len(line)-1] != '\n') {
			return nil, l.tooLong()
		}
		if err != nil && (err != io.EOF || len(line) == 0) {
			return nil, err
		}
		line = bytes.TrimSpace(line)
		if len(line) > 0 {
			return line, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// lineOwned reports whether the line last returned by next may be kept.
func (l *lineReader) lineOwned() bool { return l.owned }

func (l *lineReader) tooLong() error {
	return fmt.Errorf("%w: more than %d bytes", ErrLineTooLong, l.max)
}

// lineBuffered reports whether a complete line is already buffered, so the
// next call to next will not block.
func (l *lineReader) lineBuffered() bool {
	n := l.r.Buffered()
	if n == 0 {
		return false
	}
	buf, _ := l.r.Peek(n)
	return bytes.IndexByte(buf, '\n') >= 0
}

// readLong continues a line that did not fit in bufio's buffer. It stops
// reading as soon as the line is over the cap.
func (l *lineReader) readLong(first []byte) ([]byte, error) {
	chunks := [][]byte{append(make([]byte, 0, lineBufferSize), first...)}
	total := len(first)
	for {
		piece, err := l.r.ReadSlice('\n')
		total += len(piece)
		if total > l.max+1 {
			return nil, l.tooLong()
		}
		for len(piece) > 0 {
			last := &chunks[len(chunks)-1]
			if len(*last) == cap(*last) {
				size := min(max(total/8, lineBufferSize), longChunkMax)
				chunks = append(chunks, make([]byte, 0, size))
				continue
			}
			n := copy((*last)[len(*last):cap(*last)], piece)
			*last = (*last)[:len(*last)+n]
			piece = piece[n:]
		}
		if err != bufio.ErrBufferFull {
			line := make([]byte, 0, total)
			for _, c := range chunks {
				line = append(line, c...)
			}
			return line, err
		}
	}
}

// envelope is the shape every JSON-RPC message shares. Params, result and
// error stay raw: they are decoded once the method is known. Params refers
// into the line rather than copying it (a write request's params are nearly
// the whole line); handleLine copies it when the line is not its to keep.
type envelope struct {
	JSONRPC *string         `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  *string         `json:"method"`
	Params  rawRef          `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   json.RawMessage `json:"error"`
}

// writer serialises whole lines onto the agent's stdin.
type writer struct {
	mu sync.Mutex
	w  io.Writer
	// buf is reused between writes; guarded by mu.
	buf   []byte
	trace *tracer // nil without a wire trace
}

// writeLine writes one message as one compact line. json.Marshal never
// emits a raw newline, so the framing cannot be broken by content.
func (w *writer) writeJSON(v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return w.writeLine(data)
}

func (w *writer) writeLine(data []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.trace != nil {
		w.trace.line(WireTraceOut, data)
	}
	w.buf = append(append(w.buf[:0], data...), '\n')
	_, err := w.w.Write(w.buf)
	if cap(w.buf) > firstBufferSize { // an idle connection keeps no large buffer
		w.buf = nil
	}
	return err
}

// rawRef is a raw JSON value that refers to the decoded input instead of
// copying it. encoding/json hands UnmarshalJSON a slice of its input; were
// that ever a copy, rawRef would merely cost what json.RawMessage does.
type rawRef []byte

// UnmarshalJSON keeps data itself.
func (r *rawRef) UnmarshalJSON(data []byte) error {
	*r = data
	return nil
}

var errNotMessage = errors.New("not a JSON-RPC message")

func quoteLine(line []byte) []byte {
	if len(line) > badLineQuote {
		line = line[:badLineQuote]
	}
	return append([]byte(nil), line...)
}
