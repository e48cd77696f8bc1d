package main

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/bridge"
)

// The prompt queue and steering: what the composer sends while a turn
// runs. A prompt sent then is queued (it runs as its own turn when the
// session is free); the queue's changes reach the page as queue events,
// each with the whole list. Steering puts text into the running turn, by
// the way the session's SteerMode names, or by the fallback the page chose.

// handleEnqueue queues a prompt: it runs once no turn runs, after those
// queued before it (at once when the session is free).
func (s *server) handleEnqueue(w http.ResponseWriter, r *http.Request) {
	sess, text, ok := s.promptOf(w, r)
	if !ok {
		return
	}
	id, err := sess.Enqueue(r.Context(), acpclient.TextBlock(text))
	if err != nil {
		writeError(w, errorStatus(err), err)
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]string{"id": id})
}

// queueMove moves a queued prompt to Index (0 runs next).
type queueMove struct {
	ID    string `json:"id"`
	Index int    `json:"index"`
}

func (s *server) handleQueueMove(w http.ResponseWriter, r *http.Request) {
	var req queueMove
	if !decode(w, r, &req) {
		return
	}
	if req.Index < 0 {
		writeError(w, http.StatusBadRequest, fmt.Errorf("index %d: want 0 or more", req.Index))
		return
	}
	s.queueChange(w, r, func(sess *bridge.Session) error { return sess.MoveQueued(req.ID, req.Index) })
}

// queueRemove names a queued prompt to remove.
type queueRemove struct {
	ID string `json:"id"`
}

func (s *server) handleQueueRemove(w http.ResponseWriter, r *http.Request) {
	var req queueRemove
	if !decode(w, r, &req) {
		return
	}
	s.queueChange(w, r, func(sess *bridge.Session) error { return sess.RemoveQueued(req.ID) })
}

func (s *server) handleQueueClear(w http.ResponseWriter, r *http.Request) {
	if !decode(w, r, &struct{}{}) {
		return
	}
	s.queueChange(w, r, func(sess *bridge.Session) error { sess.ClearQueue(); return nil })
}

func (s *server) handleQueueResume(w http.ResponseWriter, r *http.Request) {
	if !decode(w, r, &struct{}{}) {
		return
	}
	s.queueChange(w, r, (*bridge.Session).ResumeQueue)
}

// queueChange applies a change to the queue of the session the path
// names and answers with the queue after it.
func (s *server) queueChange(w http.ResponseWriter, r *http.Request, change func(*bridge.Session) error) {
	sess, ok := s.sessionOf(w, r)
	if !ok {
		return
	}
	if err := change(sess); err != nil {
		writeError(w, errorStatus(err), err)
		return
	}
	list, paused := sess.Queue()
	writeJSON(w, http.StatusOK, map[string]any{"queue": nonNil(list), "paused": paused})
}

// nonNil makes an empty list a JSON array, not null.
func nonNil[T any](list []T) []T {
	if list == nil {
		return []T{}
	}
	return list
}

// steerRequest is text to steer into the running turn, and what to do
// where the session cannot: "queue" (as the next prompt), "interrupt"
// (cancel the turn and send it now) or "" (fail).
type steerRequest struct {
	Text     string `json:"text"`
	Fallback string `json:"fallback,omitempty"`
}

// handleSteer steers text into the running turn and says how it went:
// the way the agent took it, or the fallback applied.
func (s *server) handleSteer(w http.ResponseWriter, r *http.Request) {
	var req steerRequest
	if !decode(w, r, &req) {
		return
	}
	fallback := bridge.SteerVia(req.Fallback)
	switch fallback {
	case "", bridge.SteerQueue, bridge.SteerInterrupt:
	default:
		writeError(w, http.StatusBadRequest, fmt.Errorf("fallback %q: want queue, interrupt or none", req.Fallback))
		return
	}
	if strings.TrimSpace(req.Text) == "" {
		writeError(w, http.StatusBadRequest, errors.New("empty text"))
		return
	}
	sess, ok := s.sessionOf(w, r)
	if !ok {
		return
	}
	via, err := sess.Steer(r.Context(), req.Text, fallback)
	if err != nil {
		writeError(w, errorStatus(err), err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"via": string(via)})
}
