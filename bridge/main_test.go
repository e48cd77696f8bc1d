package bridge

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/acptest"
	"github.com/acphost/acphost/internal/eventlog"
	"github.com/acphost/acphost/internal/fakeclock"
	"github.com/acphost/acphost/internal/floodagent"
)

func TestMain(m *testing.M) {
	floodagent.RunIfProcess()
	goleak.VerifyTestMain(m)
}

// fakeClock adapts fakeclock.Clock to the bridge's Clock.
type fakeClock struct{ *fakeclock.Clock }

func (c fakeClock) AfterFunc(d time.Duration, f func()) Timer { return c.Clock.AfterFunc(d, f) }

// recorder reads a Host's events for a test: eventlog's Recorder, under
// the names this package's tests use (they cannot import bridgetest,
// which imports bridge).
type recorder struct {
	*eventlog.Recorder[Event]
	t    *testing.T
	log  *eventlog.Log[Event]
	done <-chan struct{}
}

func newHostAndRecorder(t *testing.T, opts *HostOptions) (*Host, *recorder) {
	t.Helper()
	// The test's temporary directories are removed by the cleanup its first
	// TempDir registers, and cleanups run last first: taking one now
	// removes them after the Host has shut down, not before its sessions
	// save their records (or its agents their files) into them.
	t.TempDir()
	h := NewHost(opts)
	rec := eventlog.Record(t, h.Events(), func(ev Event) string {
		return fmt.Sprintf("%s/%s #%d %s", ev.Bridge, ev.Session, ev.Seq, describe(ev))
	})
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := h.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
		<-rec.Done()
	})
	return h, &recorder{Recorder: rec, t: t, log: rec.Log(), done: rec.Done()}
}

// setPermissionAnswer answers permission events with f as they arrive.
func (r *recorder) setPermissionAnswer(f func(*PermissionRequest)) {
	r.OnEach(func(ev Event) {
		if ev.Kind == KindPermission && f != nil {
			f(ev.Permission)
		}
	})
}

// waitFor waits until an event matching match has arrived and returns it.
func (r *recorder) waitFor(desc string, match func(Event) bool) Event {
	r.t.Helper()
	return r.WaitFor(desc, match)
}

func (r *recorder) snapshot() []Event { return r.Snapshot() }

func (r *recorder) summary() string { return r.Summary() }

// of returns the events of one session (or agent-wide ones with "").
func (r *recorder) of(agent, session string) []Event {
	var out []Event
	for _, ev := range r.snapshot() {
		if ev.Bridge == agent && ev.Session == session {
			out = append(out, ev)
		}
	}
	return out
}

// describe renders an event compactly for order assertions.
func describe(ev Event) string {
	s := string(ev.Kind)
	switch ev.Kind {
	case KindText, KindThinking, KindUserText, KindTurnStart:
		s += ":" + ev.Text
	case KindToolStart, KindToolUpdate, KindToolEnd:
		s += ":" + ev.Tool.ID + ":" + ev.Tool.Status
	case KindPermission:
		s += ":" + ev.Tool.ID
	case KindTurnEnd:
		s += ":" + ev.StopReason
	case KindUsage:
		s += fmt.Sprintf(":%v:%d/%d", ev.Usage.Known, ev.Usage.Used, ev.Usage.Size)
	case KindCompaction:
		s += ":" + ev.Compaction.Status
	case KindExt:
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

// kinds lists describe() of events, skipping the kinds given.
func kinds(events []Event, skip ...Kind) []string {
	var out []string
next:
	for _, ev := range events {
		for _, k := range skip {
			if ev.Kind == k {
				continue next
			}
		}
		out = append(out, describe(ev))
	}
	return out
}

// agentConfig returns a Config running the fake agent binary with script.
func agentConfig(t *testing.T, id string, script acptest.Script) Config {
	t.Helper()
	bin := acptest.BuildBinary(t)
	path := acptest.WriteScript(t, script)
	return Config{ID: id, Transport: &acpclient.CommandTransport{Path: bin, Args: []string{"-script", path},
		StopTimeout: 200 * time.Millisecond, KillTimeout: 200 * time.Millisecond}}
}

func raw(s string) json.RawMessage { return json.RawMessage(s) }

func update(s string) acptest.Step { return acptest.Step{Update: raw(s)} }

// memFiles is an in-memory Files for tests.
type memFiles struct {
	mu    sync.Mutex
	files map[string]string
}

func (m *memFiles) ReadTextFile(_ context.Context, path string, line, limit int) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c, ok := m.files[path]
	if !ok {
		return "", fmt.Errorf("%s: %w", path, errNotExist)
	}
	return c, nil
}

func (m *memFiles) WriteTextFile(_ context.Context, path, content string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.files[path] = content
	return nil
}

func (m *memFiles) get(path string) (string, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c, ok := m.files[path]
	return c, ok
}

// askedApp reports whether any request among events was left to the app:
// a decision event By "app" (a policy's own answers are By "policy").
func askedApp(events []Event) bool {
	for _, ev := range events {
		if ev.Kind == KindDecision && ev.Decision.By == "app" {
			return true
		}
	}
	return false
}
