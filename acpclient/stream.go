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
// assembled in a buffer that grows up to max.
type lineReader struct {
	r    *bufio.Reader
	max  int
	long []byte
}

func newLineReader(r io.Reader, max int) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, 64<<10), max: max}
}

// next returns the next non-blank line without its line ending. The slice is
// valid until the following call.
func (l *lineReader) next() ([]byte, error) {
	for {
		line, err := l.r.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			line, err = l.readLong(line)
		}
		if len(line) > l.max+1 || (len(line) > l.max && line[len(line)-1] != '\n') {
			return nil, fmt.Errorf("%w: more than %d bytes", ErrLineTooLong, l.max)
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

// readLong continues a line that did not fit in bufio's buffer.
func (l *lineReader) readLong(first []byte) ([]byte, error) {
	l.long = append(l.long[:0], first...)
	for {
		chunk, err := l.r.ReadSlice('\n')
		l.long = append(l.long, chunk...)
		if len(l.long) > l.max+1 {
			// Stop buffering; the caller reports the overflow.
			return l.long, nil
		}
		if err != bufio.ErrBufferFull {
			if cap(l.long) > 64<<20 {
				// Do not pin a huge buffer after a one-off huge line.
				line := l.long
				l.long = nil
				return line, err
			}
			return l.long, err
		}
	}
}

// envelope is the shape every JSON-RPC message shares. Params, result and
// error stay raw: they are decoded once the method is known.
type envelope struct {
	JSONRPC *string         `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  *string         `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   json.RawMessage `json:"error"`
}

// writer serialises whole lines onto the agent's stdin.
type writer struct {
	mu sync.Mutex
	w  io.Writer
	// buf is reused between writes; guarded by mu.
	buf []byte
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
	w.buf = append(append(w.buf[:0], data...), '\n')
	_, err := w.w.Write(w.buf)
	if cap(w.buf) > 1<<20 {
		w.buf = nil
	}
	return err
}

var errNotMessage = errors.New("not a JSON-RPC message")

func quoteLine(line []byte) []byte {
	if len(line) > badLineQuote {
		line = line[:badLineQuote]
	}
	return append([]byte(nil), line...)
}
