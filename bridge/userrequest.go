package bridge

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// ErrAlreadyAnswered is returned by the answer methods of PermissionRequest,
// ElicitationRequest and AuthRequest when the request was answered before:
// by the app, by a cancelled turn, by Bridge.Close, by the agent giving up
// on it, or (a permission request) by the session's policy or authority
// when they changed; the error then names the rule.
var ErrAlreadyAnswered = errors.New("bridge: request already answered")

// ErrRequestRecord is returned by the answer methods of a PermissionRequest,
// ElicitationRequest or AuthRequest that the bridge did not hand out: one
// decoded from JSON is a record of a request, not the request itself, and
// no agent waits for its answer.
var ErrRequestRecord = errors.New("bridge: the request is a record (decoded from JSON, not live) and cannot be answered")

// Causes of abandoned requests, besides ErrClosed. Each names the rule of
// the decision event that records the abandonment (see abandonRule).
var (
	errTurnEnded     = errors.New("the turn ended")
	errTurnCancelled = fmt.Errorf("the turn was cancelled: %w", context.Canceled)
	errAgentExited   = errors.New("the agent process exited")
	// errWithdrawn: the request's own context ended (the agent gave up on
	// it with $/cancel_request, its connection closed, or the call waiting
	// for a sign-in was cancelled). It wraps the context's error.
	errWithdrawn = errors.New("the request was withdrawn")
	// errNoSignInMethod: the agent offered no sign-in method the app can
	// carry out, so the bridge declined at once.
	errNoSignInMethod = errors.New("no usable sign-in method")
)

// Decision is how a request that waited on the user was settled.
type Decision struct {
	// Request is the request's id (PermissionRequest.ID and the like).
	Request string `json:"request"`
	// Type is "permission", "elicitation" or "auth".
	Type string `json:"type"`
	// Outcome is what the agent was told: for permissions "allowed",
	// "rejected" or "cancelled"; for questions "accepted", "declined" or
	// "cancelled"; for sign-ins "signed_in" or "declined".
	Outcome string `json:"outcome"`
	// OptionID is the permission option selected, if any.
	OptionID string `json:"optionId,omitempty"`
	// By is who settled it: "app" (one of the request's answer methods),
	// "policy" (the session's policy, without asking the app) or "host"
	// (the turn was cancelled or ended, the agent gave up, the bridge
	// closed).
	By string `json:"by"`
	// Rule says why, for By "policy" ("Ask mode cancels permission
	// requests") and "host" ("turn cancelled").
	Rule string `json:"rule,omitempty"`
}

// Who settles a request (Decision.By).
const (
	byApp    = "app"
	byPolicy = "policy"
	byHost   = "host"
)

// abandonRule is the Decision.Rule of a request abandoned for cause.
func abandonRule(cause error) string {
	switch {
	case errors.Is(cause, errTurnCancelled):
		return "turn cancelled"
	case errors.Is(cause, errTurnEnded):
		return "turn ended"
	case errors.Is(cause, errAgentExited):
		return "agent process exited"
	case errors.Is(cause, ErrClosed):
		return "bridge closed"
	case errors.Is(cause, errWithdrawn):
		return "request withdrawn"
	case errors.Is(cause, errNoSignInMethod):
		return "no usable sign-in method"
	case cause != nil:
		return cause.Error()
	}
	return ""
}

// hostDecision is the decision of a request the host abandoned for cause.
func hostDecision(outcome string, cause error) Decision {
	return Decision{Outcome: outcome, By: byHost, Rule: abandonRule(cause)}
}

// userRequest is what every request that waits on the user shares
// (PermissionRequest, ElicitationRequest and AuthRequest embed it): it is
// answered once, Done closes with that answer, and while it waits (see
// Bridge.await) it is registered where a cancel or Close finds it and holds
// its turn's watchdog paused, since the user's thinking time is not the
// agent's silence. Its one answer is reported as a decision event.
type userRequest struct {
	once sync.Once
	done chan struct{}
	// release undoes await: unregisters the request and resumes the
	// watchdog. It is set before the request can be answered.
	release func()
	// record marks a request decoded from JSON (see ErrRequestRecord).
	record bool
	// report emits the decision event of the answer; set before the
	// request can be answered (by await, or by the policy's own answer).
	report func(Decision)
}

func newUserRequest() userRequest { return userRequest{done: make(chan struct{})} }

// Done is closed once the request has been answered in any way.
func (r *userRequest) Done() <-chan struct{} { return r.done }

// settle runs answer and reports d if the request was not answered yet,
// and reports ErrAlreadyAnswered otherwise. The decision is reported just
// before the answer goes out, so its event precedes everything the agent
// does in reaction. A request the bridge did not hand out (a record, or a
// zero value) reports ErrRequestRecord.
func (r *userRequest) settle(d Decision, answer func()) error {
	if r.record || r.done == nil {
		return ErrRequestRecord
	}
	err := ErrAlreadyAnswered
	r.once.Do(func() {
		err = nil
		if r.release != nil {
			r.release()
		}
		if r.report != nil {
			r.report(d)
		}
		answer()
		close(r.done)
	})
	return err
}

func (r *userRequest) base() *userRequest { return r }

// waiter is a request waiting on the user, as await and the registries see
// it.
type waiter interface {
	base() *userRequest
	// abandon answers the request the way an unanswered one is answered
	// (cancelled, declined); cause says why nobody answered.
	abandon(cause error)
}

// pendingRequests are the requests of a session, or of a bridge, that wait
// on the user, in the order they arrived.
type pendingRequests struct {
	mu      sync.Mutex
	waiting []pendingEntry
}

type pendingEntry struct {
	id string
	w  waiter
}

func (p *pendingRequests) add(id string, w waiter) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.waiting = append(p.waiting, pendingEntry{id, w})
}

func (p *pendingRequests) remove(id string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, e := range p.waiting {
		if e.id == id {
			p.waiting = append(p.waiting[:i], p.waiting[i+1:]...)
			return
		}
	}
}

// all returns the pending requests, oldest first.
func (p *pendingRequests) all() []waiter {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]waiter, 0, len(p.waiting))
	for _, e := range p.waiting {
		out = append(out, e.w)
	}
	return out
}

// abandonAll abandons every pending request, outside the lock: settling
// one unregisters it.
func (p *pendingRequests) abandonAll(cause error) {
	for _, w := range p.all() {
		w.abandon(cause)
	}
}
