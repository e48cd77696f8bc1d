package acpclient

import (
	"maps"
	"sync/atomic"
	"testing"
	"time"
)

// TestTreeSamplerOneScanServesEveryRecord: many records sampling at one
// interval are served by one scan of /proc per tick, each finding its own
// descendants in it; a record whose process has exited leaves at the tick,
// and the group (and its timer) goes with its last member.
func TestTreeSamplerOneScanServesEveryRecord(t *testing.T) {
	const n, interval = 50, time.Hour // the timer never fires: ticks are the test's
	var scans atomic.Int32
	var records []*descendants
	s := &treeSampler{scan: func() []procEntry {
		scans.Add(1)
		var procs []procEntry
		for i, d := range records {
			// Pids past any pid_max: no real process has them.
			procs = append(procs, d.root, procEntry{pid: 6_000_000 + i, ppid: d.root.pid, start: 7})
		}
		return procs
	}}
	exited := make([]chan struct{}, n)
	for i := range n {
		exited[i] = make(chan struct{})
		records = append(records, newDescendantsIn(s, 5_000_000+i, interval, exited[i]))
	}
	g := s.groups[interval]
	if len(s.groups) != 1 || len(g.members) != n {
		t.Fatalf("%d groups, %d members; want 1 group of %d", len(s.groups), len(g.members), n)
	}
	close(exited[0])
	s.tick(g)
	if got := scans.Load(); got != 1 {
		t.Fatalf("%d scans for one tick of %d records, want 1", got, n)
	}
	for i, d := range records[1:] {
		if want := map[int]uint64{6_000_001 + i: 7}; !maps.Equal(d.seen, want) {
			t.Fatalf("record %d holds %v, want %v", i+1, d.seen, want)
		}
	}
	if len(records[0].seen) != 0 || len(g.members) != n-1 {
		t.Fatalf("the exited record holds %v and the group %d members; want nothing and %d", records[0].seen, len(g.members), n-1)
	}
	for _, d := range records {
		d.end()
	}
	if len(s.groups) != 0 {
		t.Fatalf("%d groups left after every record ended", len(s.groups))
	}
	s.tick(g) // a tick that was under way: no scan, no timer armed again
	if got := scans.Load(); got != 1 {
		t.Errorf("%d scans after the group emptied, want still 1", got)
	}
}
