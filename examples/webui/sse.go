package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/acphost/acphost/bridge"
)

// handleEvents streams the Host's events as Server-Sent Events: each one
// the bridge's Event JSON, with its Pos as the SSE id. The cursor is the
// Last-Event-ID a reconnecting EventSource sends, else ?after=N (0 or
// absent: from the first event; "now": only what comes next); ?key= keeps
// one session's events, ?bridge= one agent's. History comes from the
// journal, so a tab that opens a session replays it whole, and one that
// reconnects resumes exactly after the last event it saw. A "caughtup"
// event ({"pos":N}) says when the history is done and live events follow.
func (s *server) handleEvents(w http.ResponseWriter, r *http.Request) {
	after, err := s.eventCursor(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	flusher, ok := w.(http.Flusher)
	if !ok {
		writeError(w, http.StatusInternalServerError, errors.New("streaming unsupported"))
		return
	}
	q := r.URL.Query()
	cursor := bridge.Cursor{After: after, Key: q.Get("key"), Bridge: q.Get("bridge"), CaughtUp: func(pos uint64) {
		// Called in this goroutine, between events.
		fmt.Fprintf(w, "event: caughtup\ndata: {\"pos\":%d}\n\n", pos)
		flusher.Flush()
	}}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	// "ready" tells the page the stream is open, with the cursor it starts
	// after, before any history arrives.
	fmt.Fprintf(w, "retry: 1000\nevent: ready\ndata: {\"after\":%d}\n\n", after)
	flusher.Flush()
	for ev, err := range s.host.Subscribe(r.Context(), cursor) {
		if err != nil {
			if r.Context().Err() == nil {
				writeSSEFailure(w, err)
				flusher.Flush()
			}
			return
		}
		data, err := json.Marshal(ev)
		if err != nil {
			writeSSEFailure(w, fmt.Errorf("encoding event %d: %w", ev.Pos, err))
			flusher.Flush()
			return
		}
		if _, err := fmt.Fprintf(w, "id: %d\ndata: %s\n\n", ev.Pos, data); err != nil {
			return // the tab went away
		}
		flusher.Flush()
	}
}

// eventCursor reads where a stream starts.
func (s *server) eventCursor(r *http.Request) (uint64, error) {
	if id := r.Header.Get("Last-Event-ID"); id != "" {
		n, err := strconv.ParseUint(id, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("Last-Event-ID %q: not an event position", id)
		}
		return n, nil
	}
	switch after := r.URL.Query().Get("after"); after {
	case "":
		return 0, nil
	case "now":
		return s.currentPos(r.Context())
	default:
		n, err := strconv.ParseUint(after, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("after=%q: not an event position", after)
		}
		return n, nil
	}
}

// currentPos is the position of the newest event the Host has published
// or the journal holds (a Host that has published nothing yet reports 0).
func (s *server) currentPos(ctx context.Context) (uint64, error) {
	pos := s.host.Snapshot().Pos
	if s.cfg.Journal != nil {
		last, err := s.cfg.Journal.LastPos(ctx)
		if err != nil {
			return 0, fmt.Errorf("reading the journal: %w", err)
		}
		pos = max(pos, last)
	}
	return pos, nil
}

// writeSSEFailure ends a stream with a "failure" event the page shows.
func writeSSEFailure(w http.ResponseWriter, err error) {
	data, _ := json.Marshal(map[string]string{"error": err.Error()})
	fmt.Fprintf(w, "event: failure\ndata: %s\n\n", data)
}
