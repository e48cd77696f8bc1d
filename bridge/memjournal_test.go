package bridge

import (
	"context"
	"errors"
	"sort"
	"sync"
)

// memJournal is an in-memory Journal for tests: it keeps every batch it
// was given and can be told to fail.
type memJournal struct {
	mu       sync.Mutex
	events   []Event
	batches  [][]Event
	fail     error // Append returns it while set
	failRead error // ReadEvents returns it while set
	reads    int   // ReadEvents calls
	records  map[string]Record
}

func newMemJournal() *memJournal { return &memJournal{records: map[string]Record{}} }

var errJournalDown = errors.New("journal down")

func (j *memJournal) setFail(err error) {
	j.mu.Lock()
	j.fail = err
	j.mu.Unlock()
}

func (j *memJournal) Append(_ context.Context, events []Event) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.fail != nil {
		return j.fail
	}
	batch := append([]Event(nil), events...)
	j.batches = append(j.batches, batch)
	j.events = append(j.events, batch...)
	return nil
}

func (j *memJournal) ReadEvents(_ context.Context, q EventQuery) ([]Event, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.reads++
	if j.failRead != nil {
		return nil, j.failRead
	}
	if q.Limit == 0 {
		q.Limit = 1000
	}
	i := sort.Search(len(j.events), func(i int) bool { return j.events[i].Pos > q.After })
	var out []Event
	for ; i < len(j.events) && len(out) < q.Limit; i++ {
		ev := j.events[i]
		if (q.Key == "" || ev.Key == q.Key) && (q.Bridge == "" || ev.Bridge == q.Bridge) {
			out = append(out, ev)
		}
	}
	return out, nil
}

func (j *memJournal) LastPos(context.Context) (uint64, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if len(j.events) == 0 {
		return 0, nil
	}
	return j.events[len(j.events)-1].Pos, nil
}

func (j *memJournal) LastSeq(_ context.Context, key string) (uint64, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	var last uint64
	for _, ev := range j.events {
		if ev.Key == key {
			last = ev.Seq
		}
	}
	return last, nil
}

func (j *memJournal) SaveSession(_ context.Context, key string, rec Record) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.records[key] = rec
	return nil
}

func (j *memJournal) LoadSession(_ context.Context, key string) (Record, bool, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	rec, ok := j.records[key]
	return rec, ok, nil
}

func (j *memJournal) Sessions(context.Context) ([]Record, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	out := make([]Record, 0, len(j.records))
	for _, rec := range j.records {
		out = append(out, rec)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].UpdatedAt.After(out[b].UpdatedAt) })
	return out, nil
}

func (j *memJournal) DeleteSession(_ context.Context, key string) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	delete(j.records, key)
	kept := j.events[:0]
	for _, ev := range j.events {
		if ev.Key != key {
			kept = append(kept, ev)
		}
	}
	j.events = kept
	return nil
}

// stored returns the events journaled so far and the batches they came in.
func (j *memJournal) stored() ([]Event, [][]Event) {
	j.mu.Lock()
	defer j.mu.Unlock()
	return append([]Event(nil), j.events...), append([][]Event(nil), j.batches...)
}

// readCount is how many times ReadEvents was called.
func (j *memJournal) readCount() int {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.reads
}
