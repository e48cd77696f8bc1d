package bridge

import (
	"errors"

	"github.com/acphost/acphost/acpclient"
)

// This file holds the session-side machinery behind the Provider hooks that
// profiles use: provider events (the context meter they update is
// meter.go's). The repair of failed prompts is in retry.go.

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

// errorsAsCall returns the agent's error inside err, if any.
func errorsAsCall(err error) *acpclient.Error {
	var e *acpclient.Error
	if errors.As(err, &e) {
		return e
	}
	return nil
}
