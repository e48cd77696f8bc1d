package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/bridge"
)

// maxBody bounds a request body: the API takes small JSON objects only.
const maxBody = 1 << 20

// decode reads a request's JSON body into v. Unknown fields are refused,
// so a body meant for something else (a command line, say) is an error,
// not silently ignored.
func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		status := http.StatusBadRequest
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			status = http.StatusRequestEntityTooLarge
		}
		writeError(w, status, fmt.Errorf("reading the request: %w", err))
		return false
	}
	return true
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// apiError is the body of every failed API call.
type apiError struct {
	Error string `json:"error"`
}

func writeError(w http.ResponseWriter, status int, err error) {
	writeJSON(w, status, apiError{Error: err.Error()})
}

// errorStatus maps the library's errors to HTTP statuses.
func errorStatus(err error) int {
	switch {
	case errors.Is(err, errNotFound), errors.Is(err, bridge.ErrNotQueued):
		return http.StatusNotFound
	case errors.Is(err, errOutsideWorkspace):
		return http.StatusForbidden
	case errors.Is(err, bridge.ErrBusy), errors.Is(err, bridge.ErrTurnRunning),
		errors.Is(err, bridge.ErrAlreadyAnswered), errors.Is(err, bridge.ErrSessionOpen),
		errors.Is(err, bridge.ErrSessionClosed), errors.Is(err, errNotOpen),
		errors.Is(err, bridge.ErrQueueFull), errors.Is(err, bridge.ErrNoTurn):
		return http.StatusConflict
	case errors.Is(err, acpclient.ErrUnsupported):
		return http.StatusNotImplemented
	case errors.Is(err, acpclient.ErrAgentNotFound):
		return http.StatusServiceUnavailable
	}
	return http.StatusBadGateway // the agent failed
}

var (
	errNotFound = errors.New("not found")
	errNotOpen  = errors.New("the session is not open (open it first)")
)

// agentNamed returns the configured agent with this name or index.
func (s *server) agentNamed(name string) (*agent, error) {
	for _, a := range s.agents {
		if a.spec.Name == name {
			return a, nil
		}
	}
	if i, err := strconv.Atoi(name); err == nil && i >= 0 && i < len(s.agents) {
		return s.agents[i], nil
	}
	return nil, fmt.Errorf("agent %q: %w among the agents this server was started with", name, errNotFound)
}

func (s *server) handleAgents(w http.ResponseWriter, r *http.Request) {
	list := make([]agentStatus, 0, len(s.agents))
	for _, a := range s.agents {
		list = append(list, a.status(r.Context(), s.cfg.RequestWait))
	}
	writeJSON(w, http.StatusOK, map[string]any{"agents": list, "cwd": s.cfg.Workspace.cwd, "remote": s.cfg.Workspace.hosts != nil})
}

func (s *server) handleInspector(w http.ResponseWriter, r *http.Request) {
	a, err := s.agentNamed(r.PathValue("agent"))
	if err != nil {
		writeError(w, http.StatusNotFound, err)
		return
	}
	in := a.inspect.snapshot()
	if b, _ := a.state(); b != nil {
		in.Initialize = b.InitializeResponse()
	}
	writeJSON(w, http.StatusOK, in)
}
