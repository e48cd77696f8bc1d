package bridge

import (
	"errors"

	"github.com/acphost/acphost/acpclient"
)

// This file holds the session-side machinery behind the Provider hooks that
// profiles use: provider events and the context meter's window. The repair
// of failed prompts is in retry.go.

// maxAuthRounds bounds how often one call asks the user to sign in before
// it gives up (a wrong key typed twice is not a reason to loop forever).
const maxAuthRounds = 3

// emitAll queues events a provider hook derived, as agent activity.
func (s *Session) emitAll(events []Event) {
	for _, ev := range events {
		s.emitProviderEvent(ev)
	}
}

// emitProviderEvent queues an event a provider mapped from a vendor
// notification or derived from activity: compaction goes through the meter
// handling of emitCompaction, usage updates the session's meter, agent_mode
// and model events update the session's mode and model state.
func (s *Session) emitProviderEvent(ev Event) {
	switch {
	case ev.Kind == KindCompaction && ev.Compaction != nil:
		s.emitCompaction(ev, ev.Compaction)
	case ev.Kind == KindUsage && ev.Usage != nil:
		ev.Usage = s.applyUsage(ev.Usage)
		s.emitFromAgent(ev)
	case ev.Kind == KindAgentMode && ev.AgentMode != "":
		s.auth.agentReportedMode(ev.AgentMode)
		s.emitFromAgent(ev)
		s.auth.recheckAuthority(false)
	case ev.Kind == KindModel && ev.Models != nil:
		ev.Models = s.ctl.setCurrentModel(ev.Models.CurrentModelID)
		s.emitFromAgent(ev)
	default:
		s.emitFromAgent(ev)
	}
}

// applyUsage merges a provider's usage report into the meter. A report
// without a window uses the one the agent served before, else the
// provider's table; a report with only a percentage gets its tokens from
// that window.
func (s *Session) applyUsage(u *Usage) *Usage {
	s.mu.Lock()
	defer s.mu.Unlock()
	nu := *u
	if nu.Size <= 0 {
		nu.Size = s.usage.Size
	}
	if nu.Size <= 0 && s.b.provider.ContextWindow != nil {
		nu.Size = s.b.provider.ContextWindow(s.cfg.Model)
	}
	if nu.Known && nu.Used == 0 && nu.Percent > 0 && nu.Size > 0 {
		nu.Used = int64(nu.Percent * float64(nu.Size) / 100)
	}
	if nu.Known && nu.Percent == 0 && nu.Used > 0 && nu.Size > 0 {
		nu.Percent = float64(nu.Used) * 100 / float64(nu.Size)
	}
	if nu.Cost == nil {
		nu.Cost = s.usage.Cost
	}
	s.usage = nu
	out := nu
	return &out
}

// rebaseWindow moves the meter onto a new model's window from the
// provider's table (0 when the table does not know it), keeping the used
// tokens and recomputing the percentage, and reports the result.
func (s *Session) rebaseWindow(model string) {
	if s.b.provider.ContextWindow == nil {
		return
	}
	s.mu.Lock()
	s.usage.Size = s.b.provider.ContextWindow(model)
	s.usage.Percent = 0
	if s.usage.Known && s.usage.Size > 0 {
		s.usage.Percent = min(100, float64(s.usage.Used)*100/float64(s.usage.Size))
	}
	u := s.usage
	s.mu.Unlock()
	s.emit(Event{Kind: KindUsage, Usage: &u})
}

// errorsAsCall returns the agent's error inside err, if any.
func errorsAsCall(err error) *acpclient.Error {
	var e *acpclient.Error
	if errors.As(err, &e) {
		return e
	}
	return nil
}
