package bridge

import (
	"context"
	"fmt"

	"github.com/acphost/acphost/acpclient"
)

// handlePermission applies the policy to a permission request: cancel it,
// allow it once, or ask the app with a permission event. The event follows
// the tool call's own events, since both come from the dispatch goroutine.
func (s *Session) handlePermission(ctx context.Context, req *acpclient.RequestPermissionRequest, reply func(*acpclient.RequestPermissionResponse, error)) {
	s.mu.Lock()
	snap, isNew := s.tools.ensure(&req.ToolCall)
	s.mu.Unlock()
	if isNew {
		s.emitFromAgent(Event{Kind: KindToolStart, Tool: snap})
	} else {
		s.activity()
	}
	if resp := s.Policy().permissionDecision().automaticAnswer(req.Options); resp != nil {
		reply(resp, nil)
		return
	}
	id := fmt.Sprintf("perm-%d", s.b.permSeq.Add(1))
	pr := newPermissionRequest(id, snap, req.Options, func(resp *acpclient.RequestPermissionResponse) { reply(resp, nil) })
	s.b.await(ctx, s, id, pr)
	s.emitFromAgent(Event{Kind: KindPermission, Tool: snap, Permission: pr})
}

// cancelPending abandons every request of the session that waits on the
// user: permissions are answered "cancelled", questions cancelled, sign-ins
// declined with cause.
func (s *Session) cancelPending(cause error) { s.pending.abandonAll(cause) }

// PendingPermissions returns the requests waiting for the app.
func (s *Session) PendingPermissions() []*PermissionRequest {
	out := []*PermissionRequest{}
	for _, w := range s.pending.all() {
		if p, ok := w.(*PermissionRequest); ok {
			out = append(out, p)
		}
	}
	return out
}
