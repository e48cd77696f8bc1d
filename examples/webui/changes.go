package main

import (
	"errors"
	"fmt"
	"net/http"
	"os/exec"
	"strconv"

	"github.com/acphost/acphost/bridge"
	"github.com/acphost/acphost/checkpoint"
)

// The Changes panel's API: what a turn changed in the workspace, from the
// checkpoints the session records around each turn (its changes events
// list the files), and restores. A restore that would overwrite a change
// made since the last turn ended answers 409 with the paths, and is done
// anyway only when asked again with force.

// checkpointsFor is what a session records its turns with: checkpoints
// in the host's cache directory, or nil when the server has them off.
func (s *server) checkpointsFor() *checkpoint.Options {
	if !s.cfg.Checkpoints {
		return nil
	}
	return &checkpoint.Options{}
}

// gitCanRun reports whether the workspace's sessions can record their
// turns: on an SSH host (whose session reports a missing git itself), or
// on this machine with git on the PATH. Without git, turns are not
// recorded and the page shows no Changes panel.
func gitCanRun(ws *workspace) bool {
	if ws.hosts != nil {
		return true
	}
	_, err := exec.LookPath("git")
	return err == nil
}

// errNoCheckpoints answers the Changes calls of a server that records no
// turns.
var errNoCheckpoints = errors.New("this server records no checkpoints (git was not found when it started)")

// changesOf is the open session the path names, where the server records
// checkpoints; when ok is false it has answered.
func (s *server) changesOf(w http.ResponseWriter, r *http.Request) (*bridge.Session, bool) {
	if !s.cfg.Checkpoints {
		writeError(w, http.StatusConflict, errNoCheckpoints)
		return nil, false
	}
	return s.sessionOf(w, r)
}

// handleTurnDiff answers with the unified diff of what a turn changed
// (?turn=N), all of it or one file (&path=P, relative to the workspace).
func (s *server) handleTurnDiff(w http.ResponseWriter, r *http.Request) {
	turn, err := strconv.ParseUint(r.URL.Query().Get("turn"), 10, 64)
	if err != nil || turn == 0 {
		writeError(w, http.StatusBadRequest, fmt.Errorf("turn %q: want a turn number", r.URL.Query().Get("turn")))
		return
	}
	sess, ok := s.changesOf(w, r)
	if !ok {
		return
	}
	var paths []string
	if p := r.URL.Query().Get("path"); p != "" {
		paths = append(paths, p)
	}
	diff, err := sess.TurnDiff(r.Context(), turn, paths...)
	if err != nil {
		writeError(w, errorStatus(err), err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"diff": diff})
}

// restoreRequest restores the workspace to its state before Turn, or
// only Path when set (a per-file revert); Force overwrites the files
// changed since the last turn ended.
type restoreRequest struct {
	Turn  uint64 `json:"turn"`
	Path  string `json:"path,omitempty"`
	Force bool   `json:"force,omitempty"`
}

// conflictAnswer is the body of a restore refused for the files changed
// since the last turn ended.
type conflictAnswer struct {
	Error     string   `json:"error"`
	Conflicts []string `json:"conflicts"`
}

func (s *server) handleRestore(w http.ResponseWriter, r *http.Request) {
	s.restore(w, r, false)
}

func (s *server) handleRevert(w http.ResponseWriter, r *http.Request) {
	s.restore(w, r, true)
}

// restore restores the whole workspace, or one file when file is set;
// what it changed comes as a changes event (Op "restore").
func (s *server) restore(w http.ResponseWriter, r *http.Request, file bool) {
	var req restoreRequest
	if !decode(w, r, &req) {
		return
	}
	switch {
	case req.Turn == 0:
		writeError(w, http.StatusBadRequest, errors.New("no turn: name the turn to go back before"))
		return
	case file && req.Path == "":
		writeError(w, http.StatusBadRequest, errors.New("no path: name the file to revert"))
		return
	case !file && req.Path != "":
		writeError(w, http.StatusBadRequest, errors.New("a path is for revert; restore sets back every file"))
		return
	}
	sess, ok := s.changesOf(w, r)
	if !ok {
		return
	}
	var err error
	if file {
		err = sess.RevertFile(r.Context(), req.Turn, req.Path, req.Force)
	} else {
		err = sess.Restore(r.Context(), req.Turn, req.Force)
	}
	if c, ok := errors.AsType[*checkpoint.ConflictError](err); ok {
		writeJSON(w, http.StatusConflict, conflictAnswer{Error: err.Error(), Conflicts: nonNil(c.Paths)})
		return
	}
	if err != nil {
		writeError(w, errorStatus(err), err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]bool{"restored": true})
}
