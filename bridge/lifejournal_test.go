package bridge

import (
	"context"
	"slices"
	"sync"
)

// lifeJournal is an in-memory Journal for the session lifecycle tests.
type lifeJournal struct {
	mu      sync.Mutex
	events  []Event
	records map[string]Record
}

func newLifeJournal() *lifeJournal { return &lifeJournal{records: map[string]Record{}} }

func (j *lifeJournal) Append(_ context.Context, events []Event) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.events = append(j.events, events...)
	return nil
}

func (j *lifeJournal) ReadEvents(_ context.Context, q EventQuery) ([]Event, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	var out []Event
	for _, ev := range j.events {
		if ev.Pos > q.After && (q.Key == "" || ev.Key == q.Key) && (q.Bridge == "" || ev.Bridge == q.Bridge) {
			out = append(out, ev)
		}
	}
	return out, nil
}

func (j *lifeJournal) LastPos(context.Context) (uint64, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	var last uint64
	for _, ev := range j.events {
		last = max(last, ev.Pos)
	}
	return last, nil
}

func (j *lifeJournal) LastSeq(_ context.Context, key string) (uint64, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	var last uint64
	for _, ev := range j.events {
		if ev.Key == key {
			last = max(last, ev.Seq)
		}
	}
	return last, nil
}

func (j *lifeJournal) SaveSession(_ context.Context, key string, rec Record) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.records[key] = rec
	return nil
}

func (j *lifeJournal) LoadSession(_ context.Context, key string) (Record, bool, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	rec, ok := j.records[key]
	return rec, ok, nil
}

func (j *lifeJournal) Sessions(context.Context) ([]Record, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	out := make([]Record, 0, len(j.records))
	for _, rec := range j.records {
		out = append(out, rec)
	}
	slices.SortFunc(out, func(a, b Record) int { return b.UpdatedAt.Compare(a.UpdatedAt) })
	return out, nil
}

func (j *lifeJournal) DeleteSession(_ context.Context, key string) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	delete(j.records, key)
	j.events = slices.DeleteFunc(j.events, func(ev Event) bool { return ev.Key == key })
	return nil
}

func (j *lifeJournal) record(key string) (Record, bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	rec, ok := j.records[key]
	return rec, ok
}
