package httpstream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/acphost/acphost/internal/sse"
)

// The server's streams: the connection's and the sessions', and what
// becomes of a session's requests when its stream ends or is refused.

// openSession opens the session's stream unless it is open, and waits
// until the server has answered its GET.
func (s *Stream) openSession(session string) error {
	s.mu.Lock()
	if err := s.stopped(); err != nil {
		s.mu.Unlock()
		return err
	}
	if err := s.failed[session]; err != nil {
		s.mu.Unlock()
		return err
	}
	ss := s.sessions[session]
	if ss == nil {
		ctx, cancel := context.WithCancel(s.ctx)
		ss = &sessionStream{ready: make(chan struct{}), cancel: cancel}
		s.sessions[session] = ss
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer cancel()
			s.runStream(ctx, session, ss)
		}()
	}
	s.mu.Unlock()
	select {
	case <-ss.ready:
		return ss.err
	case <-s.ctx.Done():
		return s.stoppedLocked()
	}
}

// runStream reads one server stream, the connection's (session "") or a
// session's, until it ends.
func (s *Stream) runStream(ctx context.Context, session string, ss *sessionStream) {
	s.mu.Lock()
	h := http.Header{"Accept": {"text/event-stream"}, HeaderConnection: {s.connID}}
	s.mu.Unlock()
	what := "the connection's stream"
	if session != "" {
		h.Set(HeaderSession, session)
		what = fmt.Sprintf("session %s's stream", session)
	}
	resp, err := s.do(ctx, http.MethodGet, h, nil)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = statusError(what, resp)
	}
	if ss != nil {
		ss.err = err
		close(ss.ready)
	}
	if err != nil {
		if ctx.Err() != nil {
			return
		}
		var se *StatusError
		if session != "" && errors.As(err, &se) && se.Status == http.StatusConflict {
			s.failSession(session, err)
			return
		}
		s.fail(fmt.Errorf("opening %s: %w", what, err))
		return
	}
	defer resp.Body.Close()
	r := sse.NewReader(resp.Body)
	for {
		ev := event{s: s}
		err := r.Next(&ev)
		ev.end(session)
		if err == nil {
			continue
		}
		if ctx.Err() != nil {
			return
		}
		switch {
		case errors.Is(err, io.EOF) && session == "":
			// The agent's side ended the connection: the end of file,
			// once the sessions' streams have passed on what they hold.
			s.connEnded()
		case errors.Is(err, io.EOF):
			s.sessionEnded(session)
		case errors.Is(err, io.ErrClosedPipe):
			// The reader is gone: Close or a failure.
		default:
			s.fail(fmt.Errorf("%s was lost: %w", what, err))
		}
		return
	}
}

// event passes one event's data on, holding the Stream's event lock from
// its first byte (whitespace before it is dropped) to its end.
type event struct {
	s     *Stream
	begun bool
	pk    peek
}

func (e *event) Write(p []byte) (int, error) {
	n := len(p)
	if !e.begun {
		p = bytes.TrimLeft(p, " \t")
		if len(p) == 0 {
			return n, nil
		}
		e.s.ev.Lock()
		e.begun = true
	}
	e.pk.Write(p)
	if _, err := e.s.pw.Write(p); err != nil {
		return 0, err
	}
	return n, nil
}

// end closes the event's line, if it had one, and routes by what it said.
func (e *event) end(session string) {
	if !e.begun {
		return
	}
	// Routing is noted before the line ends: the reader may answer at
	// once.
	s := e.s
	defer s.ev.Unlock()
	defer s.pw.Write([]byte{'\n'})
	m := e.pk.result()
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case m.isResponse():
		delete(s.pending, m.id)
		if m.session != "" && s.failed[m.session] == nil && s.sessions[m.session] == nil {
			// A new session (session/new, session/fork): open its stream
			// now, as the SDK does, so nothing waits in the server for it.
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				s.openSession(m.session)
			}()
		}
	case m.isRequest() && session != "":
		s.agentCalls[m.id] = session
	}
}

// sessionEnded forgets a session's stream that the server ended: its
// requests in flight fail, and its next message opens it again.
func (s *Stream) sessionEnded(session string) {
	s.rejectSession(session, fmt.Errorf("session %s's stream ended", session), false)
}

// failSession marks a session refused (409): its stream closes, its
// requests in flight fail, and so does every message for it until a
// session/load or session/resume reattaches it.
func (s *Stream) failSession(session string, err error) {
	s.rejectSession(session, err, true)
}

func (s *Stream) rejectSession(session string, err error, refused bool) {
	s.mu.Lock()
	if refused {
		s.failed[session] = err
	}
	if ss := s.sessions[session]; ss != nil {
		ss.cancel()
		delete(s.sessions, session)
	}
	last := s.ending && len(s.sessions) == 0
	var ids [][]byte
	for id, sess := range s.pending {
		if sess == session {
			delete(s.pending, id)
			ids = append(ids, rawID(id))
		}
	}
	s.mu.Unlock()
	for _, id := range ids {
		s.answer(id, err)
	}
	if last {
		s.finish(nil)
	}
}

// connEnded ends the Stream with the end of file after the connection's
// stream ended cleanly: at once if no session's stream is open, else when
// the last has ended (the server ends them too), or after endGrace.
func (s *Stream) connEnded() {
	s.mu.Lock()
	s.ending = true
	now := len(s.sessions) == 0
	if !now {
		s.endTimer = time.AfterFunc(endGrace, func() { s.finish(nil) })
	}
	s.mu.Unlock()
	if now {
		s.finish(nil)
	}
}

// rawID turns an id key back into its JSON text.
func rawID(key string) []byte {
	if key[0] == 's' {
		b, _ := json.Marshal(key[2:])
		return b
	}
	return []byte(key[2:])
}

// drop settles a message that cannot be sent because its session was
// refused: a request is answered with the error; a notification or a
// response has no one to tell.
func (s *Stream) drop(m message, err error) {
	if m.isRequest() {
		s.answer(m.rawID, err)
	}
}

// answer passes on an error response to our request id, as the SDK does
// for a request the transport could not deliver.
func (s *Stream) answer(id []byte, err error) {
	type errData struct {
		Status int    `json:"status"`
		Body   string `json:"body"`
	}
	e := struct {
		Code    int      `json:"code"`
		Message string   `json:"message"`
		Data    *errData `json:"data,omitempty"`
	}{Code: -32603, Message: fmt.Sprintf("%s %s: %v", "http", s.cfg.Name, err)}
	var se *StatusError
	if errors.As(err, &se) {
		e.Data = &errData{Status: se.Status, Body: se.Text}
	}
	line, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   any             `json:"error"`
	}{"2.0", id, e})
	line = append(line, '\n')
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped() != nil {
		return
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.ev.Lock()
		defer s.ev.Unlock()
		s.pw.Write(line)
	}()
}
