package bridge

import "github.com/acphost/acphost/acpclient"

// The session's context meter (Usage): what the agent measures, what a
// provider reports, a new model's window, and a completed compaction,
// after which the fill is unknown until measured again.

// Usage returns the session's context meter.
func (s *Session) Usage() Usage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.usage
}

// emitCompaction reports compaction and, once one completed, marks the
// context meter unknown until the agent measures again. A skipped or failed
// compaction leaves the meter as it was.
func (s *Session) emitCompaction(ev Event, c *Compaction) {
	ev.Kind, ev.Compaction = KindCompaction, c
	s.emitFromAgent(ev)
	if c.Status == CompactionCompleted {
		s.mu.Lock()
		s.usage.Known, s.usage.Used, s.usage.Percent = false, 0, 0
		u := s.usage
		s.mu.Unlock()
		s.emitFromAgent(Event{Kind: KindUsage, Usage: &u})
	}
}

// measure records a context measurement and returns the meter.
func (s *Session) measure(used, size int64, cost *acpclient.Cost) *Usage {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.usage.Known, s.usage.Used = true, used
	if size > 0 {
		s.usage.Size = size
	}
	if s.usage.Size > 0 {
		s.usage.Percent = float64(used) * 100 / float64(s.usage.Size)
	}
	if cost != nil {
		s.usage.Cost = cost
	}
	u := s.usage
	return &u
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
