package main

import (
	"context"

	"github.com/acphost/acphost/bridge"
	"github.com/acphost/acphost/journal"
)

// startJournal opens the journal of a turn or a chat while the agent
// starts. A new journal takes SQLite some 15 ms to make (its schema, the
// write-ahead log's syncs), which the agent's start (the reaper's and the
// agent's processes, the handshake) hides, as it waits on other processes.
// With --resume the journal is opened first: it names the session to
// resume, and so the workspace the agent starts in.
func startJournal(ctx context.Context, o *options) (*openingJournal, error) {
	if o.resume != "" {
		db, err := openJournal(ctx, o, false)
		if err != nil {
			return nil, err
		}
		if err := resolveResume(ctx, o, db); err != nil {
			db.Close()
			return nil, err
		}
		j := &openingJournal{done: make(chan struct{}), db: db}
		close(j.done)
		return j, nil
	}
	return openAside(func() (*journal.DB, error) { return openJournal(ctx, o, false) }), nil
}

// openAside runs open on a goroutine of its own and returns the journal
// it is opening.
func openAside(open func() (*journal.DB, error)) *openingJournal {
	j := &openingJournal{done: make(chan struct{})}
	go func() {
		defer close(j.done)
		j.db, j.err = open()
	}()
	return j
}

// openingJournal is a journal that may still be opening: a bridge.Journal
// whose calls wait for the open and fail as it failed. The agent's start
// does not call it; what the Host journals meanwhile waits.
type openingJournal struct {
	done chan struct{}
	db   *journal.DB // set before done closes; nil when the open failed
	err  error
}

// opened waits for the open and returns its error.
func (j *openingJournal) opened() error {
	<-j.done
	return j.err
}

// Close closes the journal once it is open; one that failed to open has
// nothing to close.
func (j *openingJournal) Close() error {
	if j.opened() != nil {
		return nil
	}
	return j.db.Close()
}

func (j *openingJournal) Append(ctx context.Context, events []bridge.Event) error {
	if err := j.opened(); err != nil {
		return err
	}
	return j.db.Append(ctx, events)
}

func (j *openingJournal) ReadEvents(ctx context.Context, q bridge.EventQuery) ([]bridge.Event, error) {
	if err := j.opened(); err != nil {
		return nil, err
	}
	return j.db.ReadEvents(ctx, q)
}

func (j *openingJournal) LastPos(ctx context.Context) (uint64, error) {
	if err := j.opened(); err != nil {
		return 0, err
	}
	return j.db.LastPos(ctx)
}

func (j *openingJournal) LastSeq(ctx context.Context, key string) (uint64, error) {
	if err := j.opened(); err != nil {
		return 0, err
	}
	return j.db.LastSeq(ctx, key)
}

func (j *openingJournal) SaveSession(ctx context.Context, key string, rec bridge.Record) error {
	if err := j.opened(); err != nil {
		return err
	}
	return j.db.SaveSession(ctx, key, rec)
}

func (j *openingJournal) LoadSession(ctx context.Context, key string) (bridge.Record, bool, error) {
	if err := j.opened(); err != nil {
		return bridge.Record{}, false, err
	}
	return j.db.LoadSession(ctx, key)
}

func (j *openingJournal) Sessions(ctx context.Context) ([]bridge.Record, error) {
	if err := j.opened(); err != nil {
		return nil, err
	}
	return j.db.Sessions(ctx)
}

func (j *openingJournal) DeleteSession(ctx context.Context, key string) error {
	if err := j.opened(); err != nil {
		return err
	}
	return j.db.DeleteSession(ctx, key)
}
