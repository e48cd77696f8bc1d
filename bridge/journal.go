package bridge

import (
	"context"
)

// Journal keeps a Host's events and its session records durably, so that
// history, replay to late subscribers, session lists and resume survive an
// app restart. Package journal provides the one this module ships (SQLite,
// one file per app); HostOptions.Journal turns it on.
//
// The Host calls Append from one goroutine, off the agents' path, with
// events already numbered (Pos, Seq); every other method may be called
// concurrently with it.
type Journal interface {
	// Append stores a batch of events in the order given, atomically: after
	// a crash either the whole batch is there or none of it.
	Append(ctx context.Context, events []Event) error
	// ReadEvents returns up to q.Limit stored events with Pos after q.After
	// that match q, in Pos order.
	ReadEvents(ctx context.Context, q EventQuery) ([]Event, error)
	// LastPos is the highest Pos stored (0 when empty): a Host that opens
	// the journal continues after it.
	LastPos(ctx context.Context) (uint64, error)
	// LastSeq is the highest Seq stored for a session key (0 when none):
	// its numbering continues after it.
	LastSeq(ctx context.Context, key string) (uint64, error)

	// SaveSession stores the record of the session with the given host
	// key, replacing the previous one.
	SaveSession(ctx context.Context, key string, rec Record) error
	// LoadSession returns the record of a session key.
	LoadSession(ctx context.Context, key string) (Record, bool, error)
	// Sessions lists the stored session records, most recently updated
	// first.
	Sessions(ctx context.Context) ([]Record, error)
	// DeleteSession removes a session's record and its events.
	DeleteSession(ctx context.Context, key string) error
}

// EventQuery selects journaled events.
type EventQuery struct {
	// After: only events with a greater Pos (0: from the beginning).
	After uint64
	// Key: only events of this session key ("" for any).
	Key string
	// Bridge: only events of this bridge ("" for any).
	Bridge string
	// Limit bounds the number of events returned (0: a default of 1000).
	Limit int
}
