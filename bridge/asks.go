package bridge

import (
	"context"
	"fmt"

	"github.com/acphost/acphost/acpclient"
)

// handlePermission applies the policy to a permission request: cancel it,
// allow it once, or ask the app with a permission event. The event follows
// the tool call's own events, since both come from the dispatch goroutine.
func (a *sessionAuthority) handlePermission(ctx context.Context, req *acpclient.RequestPermissionRequest, reply func(*acpclient.RequestPermissionResponse, error)) {
	s := a.s
	s.mu.Lock()
	snap, isNew := s.tools.ensure(&req.ToolCall)
	s.mu.Unlock()
	if isNew {
		s.emitFromAgent(Event{Kind: KindToolStart, Tool: snap})
	} else {
		s.activity()
	}
	id := fmt.Sprintf("perm-%d", s.b.permSeq.Add(1))
	p := s.Policy()
	if resp, rule := p.permissionAnswer(req.Options); resp != nil {
		s.auth.decideByPolicy(newPermissionRequest(id, snap, req.Options, func(*acpclient.RequestPermissionResponse) {}), rule, resp)
		reply(resp, nil) // after its events, so they precede the agent's reaction
		return
	}
	pr := newPermissionRequest(id, snap, req.Options, func(resp *acpclient.RequestPermissionResponse) { reply(resp, nil) })
	pr.ruling = s.auth.ruling
	s.b.await(ctx, s, id, pr)
	s.emitFromAgent(Event{Kind: KindPermission, Tool: snap, Permission: pr})
}

// decideByPolicy settles a request the policy answers by itself with resp
// (by the named rule) and records it: the permission event (already answered, so an app
// cannot override the policy) and the decision event naming the rule.
// The caller sends resp to the agent.
func (a *sessionAuthority) decideByPolicy(pr *PermissionRequest, rule string, resp *acpclient.RequestPermissionResponse) {
	s := a.s
	var decided Decision
	pr.report = func(d Decision) { decided = d }
	pr.settleByRule(resp, rule)
	s.emitFromAgent(Event{Kind: KindPermission, Tool: pr.Tool, Permission: pr})
	s.emit(Event{Kind: KindDecision, Decision: &decided})
}

// PendingPermissions returns the requests waiting for the app, oldest
// first.
func (s *Session) PendingPermissions() []*PermissionRequest {
	out := []*PermissionRequest{}
	for _, w := range s.pending.all() {
		if p, ok := w.(*PermissionRequest); ok {
			out = append(out, p)
		}
	}
	return out
}
