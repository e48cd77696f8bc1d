package bridge

import (
	"log/slog"
)

// HostOptions configures a Host. The zero value is ready to use.
type HostOptions struct {
	// MaxPendingEvents is how many undelivered events may wait before agents
	// are slowed down (default 4096), besides the batch
	// being delivered.
	MaxPendingEvents int
	// MaxQueuedBytes bounds the agent output the Host holds undelivered,
	// whatever the number of agents (default 8 MiB): half
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
	// for subscribers (default 4096), and
	// SubscriberTailBytes how much memory they may take (as eventBytes
	// estimates it; default 8 MiB); one that falls
	// further behind reads from the Journal.
	SubscriberTail      int
	SubscriberTailBytes int
	// Logger receives the Host's own troubles, such as a failing Journal
	// (default: discarded).
	Logger *slog.Logger
}

// defaultMaxQueuedBytes is the default of HostOptions.MaxQueuedBytes. It
// is small because what it counts costs more than itself in the process
// (the slabs and boxes in flight, the bridges' own memory) and the garbage
// collector doubles the heap: with 200 agents flooding, a process peaked
// at 140–150 MiB over its start with 16 MiB and at 117–124 MiB with 8 MiB,
// while one agent alone floods as fast with either.
const defaultMaxQueuedBytes = 8 << 20

func (o HostOptions) maxQueuedBytes() int {
	if o.MaxQueuedBytes <= 0 {
		return defaultMaxQueuedBytes
	}
	return o.MaxQueuedBytes
}
