package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/bridge"
)

// sessionOf returns the open session the request's path names, or writes
// the error.
func (s *server) sessionOf(w http.ResponseWriter, r *http.Request) (*bridge.Session, bool) {
	sess, err := s.openSession(r.PathValue("key"))
	if err != nil {
		writeError(w, errorStatus(err), err)
		return nil, false
	}
	return sess, true
}

type promptRequest struct {
	Text string `json:"text"`
}

// promptOf reads a prompt's text, {"text": ...}, for the session the
// request names, refusing an empty one; when ok is false it has answered.
func (s *server) promptOf(w http.ResponseWriter, r *http.Request) (sess *bridge.Session, text string, ok bool) {
	var req promptRequest
	if !decode(w, r, &req) {
		return nil, "", false
	}
	if sess, ok = s.sessionOf(w, r); !ok {
		return nil, "", false
	}
	if strings.TrimSpace(req.Text) == "" {
		writeError(w, http.StatusBadRequest, errors.New("empty prompt"))
		return nil, "", false
	}
	return sess, req.Text, true
}

// handlePrompt starts a turn and answers at once: the turn's events come
// on the event stream, its end as turn_end.
func (s *server) handlePrompt(w http.ResponseWriter, r *http.Request) {
	sess, text, ok := s.promptOf(w, r)
	if !ok {
		return
	}
	if sess.Busy() {
		writeError(w, http.StatusConflict, bridge.ErrBusy)
		return
	}
	s.work.Go(func() {
		if _, err := sess.Prompt(s.ctx, acpclient.TextBlock(text)); err != nil {
			s.log.Info("turn failed", "session", sess.Key(), "err", err)
		}
	})
	writeJSON(w, http.StatusAccepted, map[string]bool{"started": true})
}

func (s *server) handleCancel(w http.ResponseWriter, r *http.Request) {
	if !decode(w, r, &struct{}{}) {
		return
	}
	sess, ok := s.sessionOf(w, r)
	if !ok {
		return
	}
	sess.Cancel()
	writeJSON(w, http.StatusAccepted, map[string]bool{"cancelling": true})
}

// handleConsent is the user's consent, for this session, to an agent that
// acts without asking and cannot be moved to a mode that asks: the page
// asks when the session's authority says consentNeeded.
func (s *server) handleConsent(w http.ResponseWriter, r *http.Request) {
	if !decode(w, r, &struct{}{}) {
		return
	}
	sess, ok := s.sessionOf(w, r)
	if !ok {
		return
	}
	sess.GrantAutonomy()
	writeJSON(w, http.StatusOK, sess.Authority())
}

type permissionAnswer struct {
	ID     string `json:"id"`
	Answer string `json:"answer"` // allow or reject
}

func (s *server) handlePermission(w http.ResponseWriter, r *http.Request) {
	var req permissionAnswer
	if !decode(w, r, &req) {
		return
	}
	if req.Answer != "allow" && req.Answer != "reject" {
		writeError(w, http.StatusBadRequest, fmt.Errorf("answer %q: want allow or reject", req.Answer))
		return
	}
	sess, ok := s.sessionOf(w, r)
	if !ok {
		return
	}
	p, err := waitFor(r.Context(), s.cfg.RequestWait, func() *bridge.PermissionRequest {
		for _, p := range sess.PendingPermissions() {
			if p.ID == req.ID {
				return p
			}
		}
		return nil
	})
	if err != nil {
		writeError(w, http.StatusNotFound, fmt.Errorf("permission request %q: %w", req.ID, err))
		return
	}
	if req.Answer == "allow" {
		err = p.Allow()
	} else {
		err = p.Reject()
	}
	if err != nil {
		writeError(w, errorStatus(err), err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"answered": req.Answer})
}

// pending finds a request waiting on the user in the Host's state.
func (s *server) pending(ctx context.Context, match func(bridge.PendingRequest) bool) (bridge.PendingRequest, error) {
	p, err := waitFor(ctx, s.cfg.RequestWait, func() *bridge.PendingRequest {
		snap := s.host.Snapshot()
		all := snap.Pending
		for _, v := range snap.Sessions {
			all = append(all, v.Pending...)
		}
		for _, p := range all {
			if match(p) {
				return &p
			}
		}
		return nil
	})
	if err != nil {
		return bridge.PendingRequest{}, err
	}
	return *p, nil
}

// waitFor polls find until it finds something, for up to wait.
func waitFor[T any](ctx context.Context, wait time.Duration, find func() *T) (*T, error) {
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		if v := find(); v != nil {
			return v, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%w: not waiting (answered already, or gone)", errNotFound)
		case <-tick.C:
		}
	}
}

type elicitationAnswer struct {
	ID      string         `json:"id"`
	Action  string         `json:"action"` // accept, decline or cancel
	Content map[string]any `json:"content,omitempty"`
}

func (s *server) handleElicitation(w http.ResponseWriter, r *http.Request) {
	var req elicitationAnswer
	if !decode(w, r, &req) {
		return
	}
	key := r.PathValue("key")
	p, err := s.pending(r.Context(), func(p bridge.PendingRequest) bool {
		return p.Type == "elicitation" && p.ID == req.ID && p.Key == key
	})
	if err != nil {
		writeError(w, http.StatusNotFound, fmt.Errorf("question %q: %w", req.ID, err))
		return
	}
	switch req.Action {
	case "accept":
		err = p.Elicitation.Accept(req.Content)
	case "decline":
		err = p.Elicitation.Decline()
	case "cancel":
		err = p.Elicitation.Cancel()
	default:
		writeError(w, http.StatusBadRequest, fmt.Errorf("action %q: want accept, decline or cancel", req.Action))
		return
	}
	if err != nil {
		writeError(w, errorStatus(err), err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"answered": req.Action})
}

type authAnswer struct {
	Agent   string            `json:"agent"`
	ID      string            `json:"id"`
	Method  string            `json:"method,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	Decline bool              `json:"decline,omitempty"`
}

// handleAuth answers a sign-in request. The values of env_var methods are
// secrets: the bridge puts them in the agent's environment only.
func (s *server) handleAuth(w http.ResponseWriter, r *http.Request) {
	var req authAnswer
	if !decode(w, r, &req) {
		return
	}
	p, err := s.pending(r.Context(), func(p bridge.PendingRequest) bool {
		return p.Type == "auth" && p.ID == req.ID && p.Bridge == req.Agent
	})
	if err != nil {
		writeError(w, http.StatusNotFound, fmt.Errorf("sign-in request %q: %w", req.ID, err))
		return
	}
	if req.Decline {
		err = p.Auth.Decline()
	} else {
		if err := checkAuthEnv(p.Auth, req.Method, req.Env); err != nil {
			writeError(w, http.StatusBadRequest, err)
			return
		}
		err = p.Auth.Answer(bridge.AuthAnswer{MethodID: req.Method, Env: req.Env})
	}
	if err != nil {
		writeError(w, errorStatus(err), err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]bool{"answered": true})
}

type policyRequest struct {
	Mode     string `json:"mode"`
	ReadOnly bool   `json:"readOnly,omitempty"`
}

// handlePolicy sets the host's mode for the session. Only the four modes
// are taken: an unknown word is an error here, not Build.
func (s *server) handlePolicy(w http.ResponseWriter, r *http.Request) {
	var req policyRequest
	if !decode(w, r, &req) {
		return
	}
	mode := bridge.Mode(req.Mode)
	switch mode {
	case bridge.ModeAsk, bridge.ModePlan, bridge.ModeBuild, bridge.ModeFull:
	default:
		writeError(w, http.StatusBadRequest, fmt.Errorf("mode %q: want ask, plan, build or full", req.Mode))
		return
	}
	sess, ok := s.sessionOf(w, r)
	if !ok {
		return
	}
	sess.SetPolicy(bridge.Policy{Mode: mode, ReadOnly: req.ReadOnly})
	writeJSON(w, http.StatusOK, sess.Policy())
}

type agentModeRequest struct {
	Mode string `json:"mode"`
}

func (s *server) handleAgentMode(w http.ResponseWriter, r *http.Request) {
	var req agentModeRequest
	if !decode(w, r, &req) {
		return
	}
	sess, ok := s.sessionOf(w, r)
	if !ok {
		return
	}
	if err := sess.SetAgentMode(r.Context(), req.Mode); err != nil {
		writeError(w, errorStatus(err), err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"agentMode": sess.AgentMode()})
}

type configRequest struct {
	ID    string `json:"id"`
	Value string `json:"value,omitempty"`
	Bool  *bool  `json:"bool,omitempty"`
}

func (s *server) handleConfig(w http.ResponseWriter, r *http.Request) {
	var req configRequest
	if !decode(w, r, &req) {
		return
	}
	sess, ok := s.sessionOf(w, r)
	if !ok {
		return
	}
	opts, err := sess.SetConfigOption(r.Context(), acpclient.SetConfigOptionRequest{ConfigID: req.ID, Value: req.Value, Bool: req.Bool})
	if err != nil {
		writeError(w, errorStatus(err), err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"configOptions": opts})
}

func (s *server) handleCompact(w http.ResponseWriter, r *http.Request) {
	if !decode(w, r, &struct{}{}) {
		return
	}
	sess, ok := s.sessionOf(w, r)
	if !ok {
		return
	}
	summary, err := sess.Compact(r.Context())
	if err != nil {
		writeError(w, errorStatus(err), err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"summary": summary})
}
