//go:build linux

package acpclient

import (
	"sync"
	"time"
)

// treeSampler takes one /proc scan per interval for every descendant record
// of this process that samples at that interval, instead of one per agent.
// A scan reads every process of the host, so with one scan per agent a host
// running 200 agents read /proc 200 times a second: two minutes of system
// time in a short flood, and agents starting seconds late.
//
// It is one per process because what it reads is one per process: the
// host's process table, the same for every agent. It holds no
// configuration; a group of records sharing an interval has a timer only
// while it has a member, so an idle program has nothing running.
type treeSampler struct {
	scan   func() []procEntry // nil: scanProcs (tests count scans)
	mu     sync.Mutex
	groups map[time.Duration]*sampleGroup

	// The newest scan a stop asked for (fresh), shared by the stops that
	// asked while it ran: a Host closing 200 agents does not scan 400 times.
	scanned  *sync.Cond // on mu; signalled when a fresh scan is done
	scanning bool
	started  uint64    // fresh scans begun
	finished uint64    // the number of the one in last
	last     *procScan // its result, kept while a caller may need it
	callers  int       // in fresh
}

// sampleGroup is the records sampled at one interval, and their timer.
type sampleGroup struct {
	interval time.Duration
	members  map[*descendants]struct{}
	timer    *time.Timer
}

var processTrees treeSampler

// join adds d to the group of its interval, starting the group's timer if
// d is its first member. d's first sample comes at the group's next tick,
// at most one interval away.
func (s *treeSampler) join(d *descendants, interval time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.groups[interval]
	if g == nil {
		if s.groups == nil {
			s.groups = map[time.Duration]*sampleGroup{}
		}
		g = &sampleGroup{interval: interval, members: map[*descendants]struct{}{}}
		s.groups[interval] = g
		g.timer = time.AfterFunc(interval, func() { s.tick(g) })
	}
	g.members[d] = struct{}{}
}

// leave removes d from its group; the last member stops the group's timer.
func (s *treeSampler) leave(d *descendants, interval time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.groups[interval]
	if g == nil {
		return
	}
	delete(g.members, d)
	if len(g.members) == 0 {
		g.timer.Stop()
		delete(s.groups, interval)
	}
}

// tick scans /proc once and gives the scan to every member of g, then arms
// the next tick if g still has members. Members whose process has exited
// leave: their record must keep what it saw while the process lived.
func (s *treeSampler) tick(g *sampleGroup) {
	s.mu.Lock()
	members := make([]*descendants, 0, len(g.members))
	for d := range g.members {
		members = append(members, d)
	}
	s.mu.Unlock()
	if len(members) == 0 {
		return
	}
	scan := s.scanNow()
	for _, d := range members {
		if !d.take(scan) {
			s.leave(d, g.interval)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.groups[g.interval] == g && len(g.members) > 0 {
		g.timer.Reset(g.interval)
	}
}

// scanNow scans /proc once and indexes the scan.
func (s *treeSampler) scanNow() *procScan {
	if s.scan != nil {
		return indexProcs(s.scan())
	}
	return indexProcs(scanProcs())
}

// fresh returns a scan begun after the call. Callers that ask while one
// is under way wait for the next and share it: each sees every process
// that existed when it asked, at one scan for all.
func (s *treeSampler) fresh() *procScan {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.scanned == nil {
		s.scanned = sync.NewCond(&s.mu)
	}
	s.callers++
	defer func() {
		if s.callers--; s.callers == 0 {
			s.last = nil // an idle program keeps no scan
		}
	}()
	want := s.started + 1 // the one under way began before the call
	for s.finished < want {
		if s.scanning {
			s.scanned.Wait()
			continue
		}
		s.scanning = true
		s.started++
		n := s.started
		s.mu.Unlock()
		scan := s.scanNow()
		s.mu.Lock()
		s.scanning, s.finished, s.last = false, n, scan
		s.scanned.Broadcast()
	}
	return s.last
}
