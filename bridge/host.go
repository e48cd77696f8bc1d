package bridge

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/acphost/acphost/acpclient"
)

// HostOptions configures a Host. The zero value is ready to use.
type HostOptions struct {
	// MaxPendingEvents is how many undelivered events may wait before agents
	// are slowed down (default DefaultMaxPendingEvents), besides the batch
	// being delivered.
	MaxPendingEvents int
	// MaxQueuedBytes bounds the agent output the Host holds undelivered,
	// whatever the number of agents (default DefaultMaxQueuedBytes): half
	// is shared by the agents' connections for the lines they have read
	// and not yet turned into events (an acpclient.QueueBudget, whose
	// fairness rule lets every agent progress), half bounds the events
	// waiting for the consumer. Past it agents are slowed down; nothing is
	// dropped. A Config.Conn with its own Budget is bounded by that instead.
	MaxQueuedBytes int
	// Journal, when set, keeps every event and session record durably
	// (package journal is the SQLite one): the source of history for
	// subscribers, session lists and resume after an app restart. The app
	// opens and closes it; the Host only uses it.
	Journal Journal
	// SubscriberTail is how many of the newest events are kept in memory
	// for subscribers (default DefaultSubscriberTail), and
	// SubscriberTailBytes how much memory they may take (as eventBytes
	// estimates it; default DefaultSubscriberTailBytes); one that falls
	// further behind reads from the Journal.
	SubscriberTail      int
	SubscriberTailBytes int
	// Logger receives the Host's own troubles, such as a failing Journal
	// (default: discarded).
	Logger *slog.Logger
}

// DefaultMaxQueuedBytes is the default of HostOptions.MaxQueuedBytes. It
// is small because what it counts costs more than itself in the process
// (the slabs and boxes in flight, the bridges' own memory) and the garbage
// collector doubles the heap: with 200 agents flooding, a process peaked
// at 140–150 MiB over its start with 16 MiB and at 117–124 MiB with 8 MiB,
// while one agent alone floods as fast with either.
const DefaultMaxQueuedBytes = 8 << 20

func (o HostOptions) maxQueuedBytes() int {
	if o.MaxQueuedBytes <= 0 {
		return DefaultMaxQueuedBytes
	}
	return o.MaxQueuedBytes
}

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

// Start starts an agent and returns its Bridge. The agent is initialized;
// open sessions with Bridge.OpenSession.
func (h *Host) Start(ctx context.Context, cfg Config) (*Bridge, error) {
	if cfg.Transport == nil {
		return nil, fmt.Errorf("bridge: Start: no transport")
	}
	h.mu.Lock()
	if h.closing {
		h.mu.Unlock()
		return nil, ErrClosed
	}
	if cfg.ID == "" {
		cfg.ID = fmt.Sprintf("agent-%d", h.nextID.Add(1))
	}
	if _, dup := h.all[cfg.ID]; dup {
		h.mu.Unlock()
		return nil, fmt.Errorf("bridge: an agent with id %q already exists", cfg.ID)
	}
	b := newBridge(h, cfg)
	h.all[cfg.ID] = b
	h.mu.Unlock()
	if _, err := b.ensure(ctx); err != nil {
		h.mu.Lock()
		delete(h.all, cfg.ID)
		h.mu.Unlock()
		return nil, err
	}
	return b, nil
}

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

// Remove closes a bridge and forgets it.
func (h *Host) Remove(id string) error {
	h.mu.Lock()
	b := h.all[id]
	delete(h.all, id)
	h.mu.Unlock()
	if b == nil {
		return fmt.Errorf("bridge: no agent %q", id)
	}
	return b.Close()
}

// Shutdown closes every bridge (ending their processes) and then closes the
// event stream once the remaining events are delivered. If ctx ends first,
// undelivered events are dropped and the stream closed at once.
func (h *Host) Shutdown(ctx context.Context) error {
	h.mu.Lock()
	h.closing = true
	bridges := make([]*Bridge, 0, len(h.all))
	for _, b := range h.all {
		bridges = append(bridges, b)
	}
	h.mu.Unlock()
	closed := make(chan struct{})
	go func() {
		var wg sync.WaitGroup
		for _, b := range bridges {
			wg.Add(1)
			go func() {
				defer wg.Done()
				b.Close()
			}()
		}
		wg.Wait()
		h.events.close()
		close(closed)
	}()
	select {
	case <-closed:
	case <-ctx.Done():
		h.events.abandon()
		<-closed
		return ctx.Err()
	}
	select {
	case <-h.events.done():
		return nil
	case <-ctx.Done():
		h.events.abandon()
		return ctx.Err()
	}
}

// Close ends every agent and closes the event stream without waiting for
// the consumer: events not yet read are dropped. Use Shutdown to deliver
// them first.
func (h *Host) Close() error {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := h.Shutdown(ctx)
	if err == context.Canceled {
		return nil
	}
	return err
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
