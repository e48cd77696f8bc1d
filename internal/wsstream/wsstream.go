// Package wsstream carries newline-delimited JSON-RPC over a WebSocket, as
// the ACP remote transport draft frames it: every JSON-RPC message is one
// text message, with no newline of its own. The Conn on either side reads
// and writes lines, so a Stream turns lines into messages and back.
package wsstream

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"

	"github.com/coder/websocket"

	"github.com/acphost/acphost/internal/lines"
)

// Stream is one end of a WebSocket seen as a stream of lines. Read yields
// each text message followed by a newline; binary messages are skipped, as
// the draft says. Write sends each complete line as one text message and
// keeps a partial line until its newline arrives.
//
// Its memory is bounded by the reader: a message is passed through as it
// arrives, never gathered whole, so the line cap of the Conn reading it
// bounds it (the WebSocket's own read limit is off).
type Stream struct {
	ws   *websocket.Conn
	name string // what the errors name: the URL or the peer's address

	closed atomic.Bool // Close was called: a read error is the end of file

	rmu     sync.Mutex
	msg     io.Reader // the text message being read, nil between messages
	endLine bool      // msg ended: its newline is owed

	lines lines.Writer // the Conn's lines, one message each

	closeOnce sync.Once
	closeErr  error
}

// New returns the Stream of ws. name is used in error texts.
func New(ws *websocket.Conn, name string) *Stream {
	ws.SetReadLimit(-1)
	s := &Stream{ws: ws, name: name}
	s.lines.Send = func(line []byte) error {
		if err := ws.Write(context.Background(), websocket.MessageText, line); err != nil {
			return s.writeError(err)
		}
		return nil
	}
	return s
}

// Read reads the messages as lines. A message's bytes pass through except
// raw line breaks, which JSON allows only as whitespace between tokens: a
// peer that sends pretty-printed JSON must not split its message into
// lines, so they are read as spaces.
func (s *Stream) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	s.rmu.Lock()
	defer s.rmu.Unlock()
	for {
		if s.endLine {
			s.endLine = false
			p[0] = '\n'
			return 1, nil
		}
		if s.msg != nil {
			n, err := s.msg.Read(p)
			for i, b := range p[:n] {
				if b == '\n' || b == '\r' {
					p[i] = ' '
				}
			}
			if err == io.EOF {
				s.msg, s.endLine = nil, true
				err = nil
			}
			if err != nil {
				return n, s.readError(err)
			}
			if n > 0 {
				return n, nil
			}
			continue
		}
		// No deadline or cancellation here: Close unblocks a read, and a
		// context that can end costs a timer per message.
		typ, r, err := s.ws.Reader(context.Background())
		if err != nil {
			return 0, s.readError(err)
		}
		if typ != websocket.MessageText {
			if _, err := io.Copy(io.Discard, r); err != nil {
				return 0, s.readError(err)
			}
			continue
		}
		s.msg = r
	}
}

// readError is the end of the stream: end of file when the peer closed
// it normally or this side closed it, else what broke, naming the peer.
func (s *Stream) readError(err error) error {
	switch {
	case s.closed.Load():
		return io.EOF
	case websocket.CloseStatus(err) == websocket.StatusNormalClosure,
		websocket.CloseStatus(err) == websocket.StatusGoingAway:
		return io.EOF
	case errors.Is(err, io.EOF):
		// The TCP stream ended with no close message: the peer died or
		// the network dropped it. That is not the end of file a reader
		// takes as a normal ending.
		return fmt.Errorf("websocket %s: connection lost before a close message: %w", s.name, io.ErrUnexpectedEOF)
	}
	return fmt.Errorf("websocket %s: connection lost: %w", s.name, err)
}

// Write sends every complete line of p as one text message.
func (s *Stream) Write(p []byte) (int, error) { return s.lines.Write(p) }

func (s *Stream) writeError(err error) error {
	if s.closed.Load() {
		return fmt.Errorf("websocket %s: %w", s.name, io.ErrClosedPipe)
	}
	return fmt.Errorf("websocket %s: sending: %w", s.name, err)
}

// Close closes the WebSocket with a normal closure, waiting (a few seconds
// at most, bounded by the library) for the peer to answer it.
func (s *Stream) Close() error {
	s.closeOnce.Do(func() {
		s.closed.Store(true)
		err := s.ws.Close(websocket.StatusNormalClosure, "")
		if err != nil && !errors.Is(err, net.ErrClosed) && websocket.CloseStatus(err) == -1 {
			s.closeErr = fmt.Errorf("websocket %s: closing: %w", s.name, err)
		}
	})
	return s.closeErr
}
