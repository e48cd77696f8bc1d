package bridge

import (
	"encoding/json"
	"slices"

	"github.com/acphost/acphost/acpclient"
)

// plansKept bounds the plans a session folds: every plan event carries
// them all.
const plansKept = 64

// emitPlans folds a draft plan_update or plan_removed into the session's
// plans and reports all of them in a plan event, so that apps see the
// whole plan as with the stable update. A plan of a type the bridge does
// not know, markdown over 1 MiB, a plan past plansKept, or the removal of
// a plan it does not have changes nothing and is passed on as ext with the
// update whole.
func (s *Session) emitPlans(ev Event, u acpclient.SessionUpdate, raw json.RawMessage) {
	s.mu.Lock()
	plans, ok := s.folds.applyPlan(u)
	s.mu.Unlock()
	if !ok {
		ev.Kind, ev.Raw = KindExt, raw
		s.emitFromAgent(ev)
		return
	}
	ev.Kind, ev.Plans, ev.Plan = KindPlan, plans, planEntries(plans)
	s.emitFromAgent(ev)
}

// applyPlan applies one plan operation and returns the plans after it (a
// new slice: events share theirs), or false when it does not apply.
func (f *updateFolds) applyPlan(u acpclient.SessionUpdate) ([]acpclient.PlanContent, bool) {
	switch u := u.(type) {
	case *acpclient.PlanContentUpdate:
		if u.Plan.Raw != nil || len(u.Plan.Content) > foldedTextLimit {
			return nil, false
		}
		i := slices.IndexFunc(f.plans, func(p acpclient.PlanContent) bool { return p.PlanID == u.Plan.PlanID })
		if i < 0 && len(f.plans) >= plansKept {
			return nil, false
		}
		next := slices.Clone(f.plans)
		if i < 0 {
			next = append(next, u.Plan)
		} else {
			next[i] = u.Plan
		}
		f.plans = next
	case *acpclient.PlanRemoved:
		i := slices.IndexFunc(f.plans, func(p acpclient.PlanContent) bool { return p.PlanID == u.PlanID })
		if i < 0 {
			return nil, false
		}
		f.plans = slices.Delete(slices.Clone(f.plans), i, i+1)
	}
	if len(f.plans) == 0 {
		return []acpclient.PlanContent{}, true // no plan left: a non-nil empty list says so
	}
	return f.plans, true
}

// planEntries are the entries of the "items" plans, in order.
func planEntries(plans []acpclient.PlanContent) []acpclient.PlanEntry {
	var entries []acpclient.PlanEntry
	for _, p := range plans {
		entries = append(entries, p.Entries...)
	}
	if entries == nil {
		entries = []acpclient.PlanEntry{}
	}
	return entries
}
