package bridge

import (
	"github.com/acphost/acphost/acpclient"
)

// The app's current policy stays authoritative over the permission
// requests already waiting for it: when the policy or the session's
// authority changes, each pending request is settled again under the new
// rules (regovernPending), and an answer the app gives afterwards to one
// the rules now decide is refused without sending anything
// (PermissionRequest.governs, permission.go). SetPolicy is the app's change
// of the rules.

// ruling is how the session's rules answer pr by themselves now, and the
// rule's name, or nil when the app decides: a blocked authority cancels
// (the agent acts in a way the policy does not allow, so nothing may be
// approved), else the policy decides as it does for a new request.
func (a *sessionAuthority) ruling(pr *PermissionRequest) (*acpclient.RequestPermissionResponse, string) {
	s := a.s
	s.mu.Lock()
	p := s.policy
	var blocked string
	if st := a.state; st != nil && st.Blocked {
		blocked = st.Reason
	}
	s.mu.Unlock()
	if blocked != "" {
		return acpclient.PermissionCancelled(), "the session's authority is blocked: " + blocked
	}
	return p.permissionAnswer(pr.Options)
}

// regovernPending settles again, under the session's current policy and
// authority, every permission request waiting for the app: those the rules
// now answer by themselves are answered so (a decision event by "policy"
// naming the rule); those the app still decides keep waiting. SetPolicy and
// every change of the authority state call it.
func (a *sessionAuthority) regovernPending() {
	s := a.s
	for _, w := range s.pending.all() {
		if pr, ok := w.(*PermissionRequest); ok {
			if resp, rule := a.ruling(pr); resp != nil {
				pr.settleByRule(resp, rule)
			}
		}
	}
}

// SetPolicy changes the execution policy. It applies to the next permission
// request and file write, also in a running turn; Files with a write gate
// of their own (ReadOnlySetter) are switched with it. It also governs the
// permission requests already waiting: before SetPolicy returns, those the
// new policy answers by itself are answered so (cancelled in Ask, Plan and
// read-only, allowed once in Full), each with a decision event by "policy"
// naming the rule, and the app's answer to one of them is refused (see
// PermissionRequest). The agent's own mode follows (see Authority): an
// agent that would act unasked under the new policy is moved to a mode that
// asks (in Plan to its plan mode), or the session refuses prompts until it
// can be.
func (s *Session) SetPolicy(p Policy) {
	p = s.b.lockPolicy(p)
	s.mu.Lock()
	s.policy = p
	s.files.applyWriteGateLocked()
	s.mu.Unlock()
	s.auth.regovernPending()
	s.rec.save()
	s.auth.recheckAuthority(true)
}

// lockPolicy applies the execution mode the agent's launch forces.
func (b *Bridge) lockPolicy(p Policy) Policy {
	if b.provider.LockedMode != nil {
		if m := b.provider.LockedMode(); m != "" {
			p.Mode = m
		}
	}
	return p
}
