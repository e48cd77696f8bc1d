// Package httpstream carries newline-delimited JSON-RPC over the
// Streamable HTTP profile of ACP's remote transport draft, as the official
// TypeScript SDK (2.4.0) implements it: every message the client sends is
// one POST; the agent's messages come as server-sent events on long-lived
// GET streams, one for the connection and one per session. A Stream turns
// that into the stream of lines a Conn reads and writes.
package httpstream

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/acphost/acphost/internal/lines"
)

// The draft's headers.
const (
	HeaderConnection = "Acp-Connection-Id"
	HeaderSession    = "Acp-Session-Id"
)

// deleteTimeout bounds the DELETE that ends the connection on Close.
const deleteTimeout = 5 * time.Second

// endGrace bounds the wait, after the connection's stream has ended, for
// the sessions' streams to end too.
const endGrace = 5 * time.Second

// maxErrorBody caps the part of an error response's body an error shows.
const maxErrorBody = 512

// Config is where and how a Stream reaches the agent.
type Config struct {
	URL    string
	Name   string // the URL as errors show it, without credentials or query
	Client *http.Client
	Header http.Header // sent with every request
}

// Stream is the client's end of one Streamable HTTP connection, seen as a
// stream of lines. The first line written must be the initialize request;
// its answer opens the connection.
//
// Order: what one server stream carries is read in the order the agent
// sent it, and an event is passed on whole before the next (from any
// stream) begins. Across streams there is no order: the agent's messages
// for a session come on the session's stream, the rest (including the
// answers to session/new and session/load) on the connection's stream.
//
// Memory: an event's data is passed through as it arrives, never gathered,
// so the reader's line cap bounds it.
type Stream struct {
	cfg    Config
	ctx    context.Context // ends every request: Close or a failure
	cancel context.CancelFunc

	pr *io.PipeReader
	pw *io.PipeWriter
	ev sync.Mutex // held while one event is written to pw

	lines lines.Writer // the Conn's lines, one message each

	mu         sync.Mutex
	connID     string
	sessions   map[string]*sessionStream
	failed     map[string]error  // sessions refused (409) until reloaded
	pending    map[string]string // our requests' ids -> their session
	agentCalls map[string]string // the agent's requests' ids -> their session
	err        error             // the failure that ended the Stream
	closed     bool
	ending     bool        // the connection's stream has ended cleanly
	endTimer   *time.Timer // bounds the wait for the sessions' streams then

	wg        sync.WaitGroup
	closeOnce sync.Once
	closeErr  error
}

type sessionStream struct {
	ready  chan struct{} // closed once the GET is answered
	err    error         // its refusal, set before ready is closed
	cancel context.CancelFunc
}

// New returns a Stream that has sent nothing yet.
func New(cfg Config) *Stream {
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	s := &Stream{
		cfg: cfg, ctx: ctx, cancel: cancel, pr: pr, pw: pw,
		sessions:   map[string]*sessionStream{},
		failed:     map[string]error{},
		pending:    map[string]string{},
		agentCalls: map[string]string{},
	}
	s.lines.Send = s.send
	return s
}

// StatusError is an HTTP answer that refused a request.
type StatusError struct {
	Op     string // what was asked: "initialize", "POST", "session stream"...
	Status int
	Text   string // the status line and the start of the body
}

func (e *StatusError) Error() string { return e.Op + " refused: " + e.Text }

// Read reads the agent's messages as lines.
func (s *Stream) Read(p []byte) (int, error) {
	n, err := s.pr.Read(p)
	if err != nil {
		s.mu.Lock()
		closed := s.closed
		s.mu.Unlock()
		if closed {
			err = io.EOF
		}
	}
	return n, err
}

// Write sends every complete line of p as one POST, in order.
func (s *Stream) Write(p []byte) (int, error) { return s.lines.Write(p) }

// send POSTs one message.
func (s *Stream) send(line []byte) error {
	var pk peek
	pk.Write(line)
	m := pk.result()

	s.mu.Lock()
	if err := s.stopped(); err != nil {
		s.mu.Unlock()
		return err
	}
	connID := s.connID
	session := ""
	switch {
	case m.method != "":
		session = m.session
	case m.isResponse():
		session = s.agentCalls[m.id]
		delete(s.agentCalls, m.id)
	}
	if session != "" && (m.method == "session/load" || m.method == "session/resume") {
		delete(s.failed, session)
	}
	s.mu.Unlock()
	if connID == "" {
		return s.initialize(line, m)
	}

	if session != "" {
		if err := s.openSession(session); err != nil {
			var se *StatusError
			if errors.As(err, &se) && se.Status == http.StatusConflict {
				s.drop(m, err)
				return nil
			}
			return s.fail(err)
		}
	}
	if session != "" && m.isRequest() {
		s.mu.Lock()
		s.pending[m.id] = session
		s.mu.Unlock()
	}
	h := http.Header{"Content-Type": {"application/json"}, HeaderConnection: {connID}}
	if session != "" {
		h.Set(HeaderSession, session)
	}
	resp, err := s.do(s.ctx, http.MethodPost, h, line)
	if err != nil {
		return s.fail(fmt.Errorf("sending: %w", err))
	}
	if resp.StatusCode/100 == 2 {
		drain(resp)
		return nil
	}
	serr := statusError("POST", resp)
	switch {
	case session != "" && resp.StatusCode == http.StatusConflict:
		s.failSession(session, serr)
		s.drop(m, serr)
		return nil
	case m.isRequest() && !connectionGone(resp.StatusCode):
		s.mu.Lock()
		_, still := s.pending[m.id]
		delete(s.pending, m.id)
		s.mu.Unlock()
		if still || session == "" {
			s.answer(m.rawID, serr)
		}
		return nil
	}
	return s.fail(serr)
}

// connectionGone says whether a POST's status means the connection is
// unusable (credentials refused, or the server no longer knows it), as
// the SDK reads them, rather than that one request failed.
func connectionGone(status int) bool {
	switch status {
	case http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound, http.StatusGone:
		return true
	}
	return false
}

// initialize POSTs the initialize request; its answer, 200 with the
// connection's id, is passed on as the first line read, and the
// connection's stream opens after it.
func (s *Stream) initialize(line []byte, m message) error {
	if m.method != "initialize" || !m.isRequest() {
		return s.fail(errors.New("the first message must be the initialize request"))
	}
	resp, err := s.do(s.ctx, http.MethodPost, http.Header{"Content-Type": {"application/json"}}, line)
	if err != nil {
		return s.fail(fmt.Errorf("initialize: %w", err))
	}
	if resp.StatusCode != http.StatusOK {
		return s.fail(statusError("initialize", resp))
	}
	id := resp.Header.Get(HeaderConnection)
	if id == "" {
		drain(resp)
		return s.fail(fmt.Errorf("initialize answered without an %s header", HeaderConnection))
	}
	s.mu.Lock()
	if err := s.stopped(); err != nil {
		s.mu.Unlock()
		drain(resp)
		return err
	}
	s.connID = id
	s.wg.Add(1) // under s.mu, as Close sets closed before it waits
	s.mu.Unlock()
	go func() {
		defer s.wg.Done()
		err := s.emitBody(resp.Body)
		resp.Body.Close()
		if err != nil {
			s.fail(fmt.Errorf("reading the initialize answer: %w", err))
			return
		}
		s.runStream(s.ctx, "", nil)
	}()
	return nil
}

// emitBody passes a JSON body on as one line: line breaks, which JSON
// allows only between tokens, become spaces.
func (s *Stream) emitBody(body io.Reader) error {
	s.ev.Lock()
	defer s.ev.Unlock()
	buf := make([]byte, 32<<10)
	for {
		n, err := body.Read(buf)
		for i, b := range buf[:n] {
			if b == '\n' || b == '\r' {
				buf[i] = ' '
			}
		}
		if n > 0 {
			if _, werr := s.pw.Write(buf[:n]); werr != nil {
				return werr
			}
		}
		if err == io.EOF {
			_, err = s.pw.Write([]byte{'\n'})
			return err
		}
		if err != nil {
			return err
		}
	}
}

func (s *Stream) do(ctx context.Context, method string, h http.Header, body []byte) (*http.Response, error) {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, s.cfg.URL, r)
	if err != nil {
		return nil, err
	}
	for k, v := range s.cfg.Header {
		req.Header[k] = v
	}
	for k, v := range h {
		req.Header[k] = v
	}
	resp, err := s.cfg.Client.Do(req)
	if err != nil {
		return nil, scrub(err)
	}
	return resp, nil
}

// scrub keeps the URL, which may carry a token in its query, out of a
// client error: the Stream's errors name the endpoint themselves.
func scrub(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// statusError reads a refusal, keeping the start of its body.
func statusError(op string, resp *http.Response) *StatusError {
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	text := resp.Status
	if t := bytes.TrimSpace(b); len(t) > 0 {
		text += ": " + string(bytes.Map(func(r rune) rune {
			if r == '\n' || r == '\r' {
				return ' '
			}
			return r
		}, t))
	}
	return &StatusError{Op: op, Status: resp.StatusCode, Text: text}
}

func drain(resp *http.Response) {
	io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBody))
	resp.Body.Close()
}

// fail ends the Stream with err, naming the endpoint, and returns that.
func (s *Stream) fail(err error) error {
	return s.finish(fmt.Errorf("http %s: %w", s.cfg.Name, err))
}

// finish ends the Stream: with err, or with the end of file if nil. The
// server is told to drop the connection, in the background.
func (s *Stream) finish(err error) error {
	s.mu.Lock()
	if s.err != nil || s.closed {
		err = s.stopped()
		s.mu.Unlock()
		return err
	}
	if err == nil {
		s.err = io.EOF
	} else {
		s.err = err
	}
	if s.endTimer != nil {
		s.endTimer.Stop()
	}
	if err != nil {
		// What broke this connection may have broken the idle ones in
		// the client's pool too (a network drop): the next connection
		// must not send its initialize, which is not retried, on one.
		s.cfg.Client.CloseIdleConnections()
	}
	if s.connID != "" {
		connID := s.connID
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.deleteConn(connID)
		}()
	}
	s.mu.Unlock()
	s.cancel()
	s.pw.CloseWithError(s.err)
	return err
}

// stopped is the error of a Stream that has ended, nil while it runs.
// s.mu is held.
func (s *Stream) stopped() error {
	switch {
	case s.closed:
		return fmt.Errorf("http %s: %w", s.cfg.Name, io.ErrClosedPipe)
	case s.err == io.EOF:
		return fmt.Errorf("http %s: the connection has ended: %w", s.cfg.Name, io.ErrClosedPipe)
	}
	return s.err
}

func (s *Stream) stoppedLocked() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.stopped(); err != nil {
		return err
	}
	return fmt.Errorf("http %s: %w", s.cfg.Name, io.ErrClosedPipe)
}

// deleteConn asks the server to end the connection.
func (s *Stream) deleteConn(connID string) error {
	ctx, cancel := context.WithTimeout(context.Background(), deleteTimeout)
	defer cancel()
	resp, err := s.do(ctx, http.MethodDelete, http.Header{HeaderConnection: {connID}}, nil)
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 && resp.StatusCode != http.StatusNotFound {
		return statusError("DELETE", resp)
	}
	drain(resp)
	return nil
}

// Close ends the connection: its requests and streams stop, the server is
// asked to drop it (a DELETE, a few seconds at most), and Close returns
// once every goroutine of the Stream has.
func (s *Stream) Close() error {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		failed := s.err != nil
		s.closed = true
		if s.endTimer != nil {
			s.endTimer.Stop()
		}
		connID := s.connID
		s.mu.Unlock()
		s.cancel()
		s.pw.CloseWithError(io.EOF)
		if !failed && connID != "" {
			if err := s.deleteConn(connID); err != nil {
				s.closeErr = fmt.Errorf("http %s: closing: %w", s.cfg.Name, err)
			}
		}
		s.wg.Wait()
	})
	return s.closeErr
}
