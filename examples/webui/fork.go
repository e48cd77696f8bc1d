package main

import (
	"context"
	"errors"
	"net/http"

	"github.com/acphost/acphost/bridge"
)

// Fork and rewind: a new session that goes on from an open one, at its
// end or before one of its turns (to send that turn's message again,
// edited). The page offers only what the session says it can do
// (Session.CanFork); a transcript fork, where the agent cannot fork, is a
// separate choice the page labels as such.

// forkChecks is what the page may offer a session: a fork at its end,
// and a rewind before each of the turns listed.
type forkChecks struct {
	// CanFork: Fork at the end can be tried; ForkWhy says why not.
	CanFork bool   `json:"canFork"`
	ForkWhy string `json:"forkWhy,omitempty"`
	// Rewind are the turns the agent can fork before (CanFork(turn) is
	// nil); RewindWhy says why it cannot before the others.
	Rewind    []uint64 `json:"rewind,omitempty"`
	RewindWhy string   `json:"rewindWhy,omitempty"`
	// Transcript: a transcript fork can be made where the agent cannot
	// fork (it needs the journal).
	Transcript bool `json:"transcript,omitempty"`
}

// checkForks asks an open session of turns turns what it can fork.
func (s *server) checkForks(sess *bridge.Session, turns uint64) forkChecks {
	var c forkChecks
	if err := sess.CanFork(0); err != nil {
		c.ForkWhy = err.Error()
	} else {
		c.CanFork = true
	}
	for n := uint64(1); n <= turns; n++ {
		if err := sess.CanFork(n); err != nil {
			if c.RewindWhy == "" {
				c.RewindWhy = err.Error()
			}
			continue
		}
		c.Rewind = append(c.Rewind, n)
	}
	c.Transcript = s.cfg.Journal != nil
	return c
}

// forkRequest forks at the end, or before BeforeTurn; Transcript is the
// explicit choice of a transcript fork where the agent cannot fork.
type forkRequest struct {
	BeforeTurn uint64 `json:"beforeTurn,omitempty"`
	Transcript bool   `json:"transcript,omitempty"`
}

// handleFork forks the session and answers with the new session's key.
// Like opening, it runs on the server's context: a tab that goes away
// does not leave a fork half made.
func (s *server) handleFork(w http.ResponseWriter, r *http.Request) {
	var req forkRequest
	if !decode(w, r, &req) {
		return
	}
	sess, ok := s.sessionOf(w, r)
	if !ok {
		return
	}
	if req.Transcript && s.cfg.Journal == nil {
		writeError(w, http.StatusConflict, errors.New("a transcript fork reads the journal, and this server has none"))
		return
	}
	e, err := s.entry(r.Context(), sess.Key())
	if err != nil {
		writeError(w, errorStatus(err), err)
		return
	}
	fork, err := s.fork(sess, e.Cwd, bridge.ForkOptions{BeforeTurn: req.BeforeTurn, Transcript: req.Transcript})
	if err != nil {
		writeError(w, errorStatus(err), err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"key": fork.Key()})
}

// fork forks sess, which works in dir, with files of its own there.
func (s *server) fork(sess *bridge.Session, dir string, opts bridge.ForkOptions) (*bridge.Session, error) {
	ctx, cancel := context.WithTimeout(s.ctx, s.cfg.StartTimeout)
	defer cancel()
	if dir == "" {
		dir = s.cfg.Workspace.cwd
	}
	files, err := s.cfg.Workspace.files(ctx, dir)
	if err != nil {
		return nil, err
	}
	opts.Files = files
	fork, err := sess.Fork(ctx, opts)
	if err != nil {
		files.Close()
		return nil, err
	}
	s.mu.Lock()
	s.files[fork.Key()] = files
	s.mu.Unlock()
	return fork, nil
}
