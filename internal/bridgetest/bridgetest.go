// Package bridgetest holds the test helpers that the tests of package
// bridge's profiles share: a Host with a Recorder of its events, a Config
// running the fake agent of package acptest, and fake agent programs
// installed under a profile's binary name that record how they were
// started and what they received.
package bridgetest

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/acptest"
	"github.com/acphost/acphost/bridge"
	"github.com/acphost/acphost/internal/eventlog"
	"github.com/acphost/acphost/internal/fakeclock"
)

// FakeClock adapts fakeclock.Clock to the bridge's Clock.
type FakeClock struct{ *fakeclock.Clock }

// AfterFunc schedules f on the fake clock.
func (c FakeClock) AfterFunc(d time.Duration, f func()) bridge.Timer {
	return c.Clock.AfterFunc(d, f)
}

// Recorder reads a Host's events for a test.
type Recorder struct {
	*eventlog.Recorder[bridge.Event]
}

// NewHost returns a Host whose events a Recorder reads; the host is shut
// down when the test ends.
func NewHost(t *testing.T, opts *bridge.HostOptions) (*bridge.Host, *Recorder) {
	t.Helper()
	// The test's temporary directories are removed by the cleanup its first
	// TempDir registers, and cleanups run last first: taking one now
	// removes them after the Host has shut down, not before its sessions
	// save their records (or its agents their files) into them.
	t.TempDir()
	h := bridge.NewHost(opts)
	rec := eventlog.Record(t, h.Events(), func(ev bridge.Event) string {
		return fmt.Sprintf("%s/%s #%d %s", ev.Bridge, ev.Session, ev.Seq, Describe(ev))
	})
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := h.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
		<-rec.Done()
	})
	return h, &Recorder{rec}
}

// SetPermissionAnswer answers permission events with f as they arrive.
func (r *Recorder) SetPermissionAnswer(f func(*bridge.PermissionRequest)) {
	r.OnEach(func(ev bridge.Event) {
		if ev.Kind == bridge.KindPermission && f != nil {
			f(ev.Permission)
		}
	})
}

// Of returns the events of one session (or agent-wide ones with "").
func (r *Recorder) Of(agent, session string) []bridge.Event {
	var out []bridge.Event
	for _, ev := range r.Snapshot() {
		if ev.Bridge == agent && ev.Session == session {
			out = append(out, ev)
		}
	}
	return out
}

// Describe renders an event compactly for order assertions.
func Describe(ev bridge.Event) string {
	s := string(ev.Kind)
	switch ev.Kind {
	case bridge.KindText, bridge.KindThinking, bridge.KindUserText, bridge.KindTurnStart:
		s += ":" + ev.Text
	case bridge.KindToolStart, bridge.KindToolUpdate, bridge.KindToolEnd:
		s += ":" + ev.Tool.ID + ":" + ev.Tool.Status
	case bridge.KindPermission:
		s += ":" + ev.Tool.ID
	case bridge.KindTurnEnd:
		s += ":" + ev.StopReason
	case bridge.KindUsage:
		s += fmt.Sprintf(":%v:%d/%d", ev.Usage.Known, ev.Usage.Used, ev.Usage.Size)
	case bridge.KindCompaction:
		s += ":" + ev.Compaction.Status
	case bridge.KindExt:
		s += ":" + ev.Method
	}
	if ev.Replay {
		s += "(replay)"
	}
	if ev.Late {
		s += "(late)"
	}
	return s
}

// Kinds lists Describe of events, skipping the kinds given.
func Kinds(events []bridge.Event, skip ...bridge.Kind) []string {
	var out []string
next:
	for _, ev := range events {
		for _, k := range skip {
			if ev.Kind == k {
				continue next
			}
		}
		out = append(out, Describe(ev))
	}
	return out
}

// AgentConfig returns a Config running the fake agent binary with script.
func AgentConfig(t *testing.T, id string, script acptest.Script) bridge.Config {
	t.Helper()
	bin := acptest.BuildBinary(t)
	path := acptest.WriteScript(t, script)
	return bridge.Config{ID: id, Transport: &acpclient.CommandTransport{Path: bin, Args: []string{"-script", path},
		StopTimeout: 200 * time.Millisecond, KillTimeout: 200 * time.Millisecond}}
}

// Raw is s as raw JSON.
func Raw(s string) json.RawMessage { return json.RawMessage(s) }

// Update is a script step sending the session update s.
func Update(s string) acptest.Step { return acptest.Step{Update: Raw(s)} }

// Context returns a context that ends with the test, at the latest after
// twenty seconds.
func Context(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// Eventually polls cond for up to thirty seconds (a bound for loaded CI
// machines; a passing test does not wait for it).
func Eventually(t *testing.T, desc string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", desc)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
