package bridge

import (
	"sort"
	"sync"
)

// Snapshot is the live state of a Host at one position of its stream, for
// a UI that connects late: show it, then Subscribe with Cursor{After: Pos}
// for everything after it, with no gap and no duplicate.
type Snapshot struct {
	// Pos is the position of the last event the state includes.
	Pos uint64 `json:"pos"`
	// Sessions are the views of the sessions that have had events, in the
	// order their first event arrived.
	Sessions []SessionView `json:"sessions"`
	// Pending are the requests waiting on the user outside any session
	// (a sign-in while a session opens, a question of the agent's own), in
	// the order they arrived.
	Pending []PendingRequest `json:"pending,omitempty"`
}

// liveViews are the Host's SessionViews, folded by the pump.
type liveViews struct {
	mu       sync.Mutex
	pos      uint64
	sessions map[string]*SessionView
	order    map[string]uint64 // Pos of each session's first event
	pending  []PendingRequest  // agent-wide requests
}

func newLiveViews() *liveViews {
	return &liveViews{sessions: map[string]*SessionView{}, order: map[string]uint64{}}
}

// apply folds a published batch.
func (l *liveViews) apply(batch []Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := range batch {
		ev := &batch[i]
		l.pos = ev.Pos
		if ev.Key == "" {
			l.applyAgentWide(ev)
			continue
		}
		v := l.sessions[ev.Key]
		if v == nil {
			v = &SessionView{}
			l.sessions[ev.Key] = v
			l.order[ev.Key] = ev.Pos
		}
		v.Apply(*ev)
		if v.Closed { // the live state is of open sessions
			delete(l.sessions, ev.Key)
			delete(l.order, ev.Key)
		}
	}
}

// applyAgentWide keeps the requests that belong to no session.
func (l *liveViews) applyAgentWide(ev *Event) {
	if p, ok := pendingOf(ev); ok {
		l.pending = append(l.pending, p)
		return
	}
	if ev.Kind == KindDecision && ev.Decision != nil {
		d := ev.Decision
		l.pending = removePending(l.pending, func(p PendingRequest) bool {
			return p.Bridge == ev.Bridge && p.ID == d.Request && (d.Type == "" || d.Type == p.Type)
		})
	}
}

func (l *liveViews) snapshot() Snapshot {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := Snapshot{Pos: l.pos, Sessions: make([]SessionView, 0, len(l.sessions)),
		Pending: append([]PendingRequest(nil), l.pending...)}
	for _, v := range l.sessions {
		s.Sessions = append(s.Sessions, v.clone())
	}
	sort.Slice(s.Sessions, func(i, j int) bool { return l.order[s.Sessions[i].Key] < l.order[s.Sessions[j].Key] })
	return s
}
