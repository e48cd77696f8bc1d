// Package lines turns the newline-framed stream a Conn writes into the
// messages a message-based transport (WebSocket, Streamable HTTP) sends:
// one a line.
package lines

import (
	"bytes"
	"sync"
)

// Writer passes each complete line written to it, without its newline,
// to Send, in order; blank lines are dropped, and a line written in parts
// is kept until its newline arrives. Writes may come from several
// goroutines; they are passed on one at a time.
type Writer struct {
	// Send sends one line. The line is only valid during the call.
	Send func(line []byte) error

	mu      sync.Mutex
	partial []byte // a line written without its newline yet
}

// Write sends every complete line of p. When Send fails, Write returns
// 0 and that error.
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	written := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			w.partial = append(w.partial, p...)
			break
		}
		line := p[:i]
		if len(w.partial) > 0 {
			line = append(w.partial, line...)
		}
		p = p[i+1:]
		if len(bytes.TrimSpace(line)) > 0 {
			if err := w.Send(line); err != nil {
				return 0, err
			}
		}
		w.partial = w.partial[:0]
	}
	return written, nil
}
