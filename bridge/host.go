package bridge

import (
	"sort"
	"sync"
	"sync/atomic"

	"github.com/acphost/acphost/acpclient"
)

// Host runs many agents and merges their events into one ordered stream.
// Read Events for as long as the Host lives: a consumer that stops reading
// slows every agent down (nothing is dropped), and consecutive text deltas
// of one message may be merged while it lags.
type Host struct {
	journal Journal // nil: events are not kept
	events  *stream
	budget  *acpclient.QueueBudget // shared by the agents' connections
	nextID  atomic.Uint64

	mu      sync.Mutex
	all     map[string]*Bridge // every bridge not Removed
	closing bool
}

// NewHost returns a Host; opts may be nil.
func NewHost(opts *HostOptions) *Host {
	var o HostOptions
	if opts != nil {
		o = *opts
	}
	return &Host{journal: o.Journal, events: newStream(o), all: map[string]*Bridge{},
		budget: acpclient.NewQueueBudget(o.maxQueuedBytes() / 2)}
}

// Events is the host's event stream. It is closed after Shutdown.
func (h *Host) Events() <-chan Event { return h.events.out }

// Bridge returns the bridge with the given id, whether its agent runs or
// not (Bridge.Running tells): a bridge whose agent died stays usable, and
// its next call starts the agent again. Only Remove forgets a bridge.
func (h *Host) Bridge(id string) (*Bridge, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	b, ok := h.all[id]
	return b, ok
}

// Bridges returns every bridge not removed, running or not, by id.
func (h *Host) Bridges() []*Bridge {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]*Bridge, 0, len(h.all))
	for _, b := range h.all {
		out = append(out, b)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].cfg.ID < out[j].cfg.ID })
	return out
}

// openSession returns the open session of a key in any bridge, or nil.
func (h *Host) openSession(key string) *Session {
	for _, b := range h.allBridges() {
		if s := b.openByKey(key); s != nil {
			return s
		}
	}
	return nil
}

// openByKey returns the bridge's open session of a key, or nil. The Host
// reads a bridge's sessions only through it.
func (b *Bridge) openByKey(key string) *Session {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.open[key]
}

// allBridges returns every bridge of the Host, running or not.
func (h *Host) allBridges() []*Bridge {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]*Bridge, 0, len(h.all))
	for _, b := range h.all {
		out = append(out, b)
	}
	return out
}

// Snapshot returns the state of every session, as of the last event the
// Host has published to subscribers. Publishing runs behind the agents: an
// event a call has just caused (the turn_end of a Prompt that returned,
// the session_closed of a Close) may not be folded in yet. A UI that
// subscribes after Snapshot.Pos sees it arrive.
func (h *Host) Snapshot() Snapshot { return h.events.views.snapshot() }
