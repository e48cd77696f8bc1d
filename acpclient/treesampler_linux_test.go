package acpclient

import (
	"maps"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acphost/acphost/internal/waitfor"
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
		d.end() // its own fresh scans, through s
	}
	if len(s.groups) != 0 {
		t.Fatalf("%d groups left after every record ended", len(s.groups))
	}
	ended := scans.Load()
	s.tick(g) // a tick that was under way: no scan, no timer armed again
	if got := scans.Load(); got != ended {
		t.Errorf("a tick of the emptied group scanned (%d scans, want %d)", got, ended)
	}
}

// TestTreeSamplerFreshScansShared: a stop's scan is one begun after it
// asked; stops that ask while a scan runs share the next one, and an idle
// sampler keeps no scan.
func TestTreeSamplerFreshScansShared(t *testing.T) {
	const waiters = 10
	var scans atomic.Int32
	release := make(chan struct{})
	s := &treeSampler{scan: func() []procEntry {
		n := int(scans.Add(1))
		<-release
		return []procEntry{{pid: n, ppid: 1, start: 1}} // the pid names the scan
	}}
	got := make(chan int, waiters+1)
	scanOf := func(p *procScan) int {
		for pid := range p.start {
			return pid
		}
		return 0
	}
	go func() { got <- scanOf(s.fresh()) }()
	for scans.Load() != 1 {
		time.Sleep(time.Millisecond) // the first scan is under way
	}
	for range waiters {
		go func() { got <- scanOf(s.fresh()) }()
	}
	for {
		s.mu.Lock()
		n := s.callers
		s.mu.Unlock()
		if n == waiters+1 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	release <- struct{}{} // scan 1 ends: it began before the waiters asked
	if first := waitfor.Recv(t, got, "the result"); first != 1 {
		t.Fatalf("the first caller got scan %d, want 1", first)
	}
	release <- struct{}{} // scan 2, the waiters'
	for range waiters {
		if n := waitfor.Recv(t, got, "the result"); n != 2 {
			t.Fatalf("a caller that asked during scan 1 got scan %d, want 2", n)
		}
	}
	if n := scans.Load(); n != 2 {
		t.Errorf("%d scans for %d callers, want 2", n, waiters+1)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.last != nil {
		t.Error("the sampler keeps its last scan with no caller left")
	}
}
