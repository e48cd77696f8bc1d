package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/acptest"
	"github.com/acphost/acphost/internal/fakeclock"
	"github.com/acphost/acphost/internal/waitfor"
)

// earlySize reports how many updates the bridge holds for unknown
// sessions, and their estimated bytes.
func (b *Bridge) earlySize() (int, int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.early.order.Len(), b.early.bytes
}

// waitEarlySize polls until the early buffer holds n updates.
func waitEarlySize(t *testing.T, b *Bridge, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got, _ := b.earlySize()
		if got == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("early buffer holds %d updates, want %d", got, n)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// dropReports returns the error events that report dropped early updates.
func dropReports(rec *recorder) []Event {
	var out []Event
	for _, ev := range rec.snapshot() {
		if ev.Kind == KindError && errors.Is(ev.Err, ErrEarlyUpdatesDropped) {
			out = append(out, ev)
		}
	}
	return out
}

// ghostSteps are n updates for a session id that never exists.
func ghostSteps(n int, step acptest.Step) []acptest.Step {
	steps := make([]acptest.Step, n)
	for i := range steps {
		steps[i] = step
		steps[i].SessionID = "ghost"
	}
	return steps
}

func TestEarlyUpdateFloodStaysUnderCap(t *testing.T) {
	tests := []struct {
		name      string
		limits    EarlyUpdateLimits
		flood     []acptest.Step
		wantCount int   // updates held after the flood, at most
		wantBytes int64 // their bytes, at most
	}{
		{"count cap", EarlyUpdateLimits{MaxUpdates: 50}, ghostSteps(2000, acptest.Step{Text: strings.Repeat("x", 1<<10)}),
			50, defaultEarlyUpdateBytes},
		{"byte cap", EarlyUpdateLimits{MaxBytes: 1 << 20}, ghostSteps(100, acptest.Step{Huge: 64 << 10}),
			defaultEarlyUpdates, 1 << 20},
		{"defaults", EarlyUpdateLimits{}, ghostSteps(1500, acptest.Step{Text: "tiny"}),
			defaultEarlyUpdates, defaultEarlyUpdateBytes},
		{"one update over the byte cap", EarlyUpdateLimits{MaxBytes: 32 << 10}, ghostSteps(1, acptest.Step{Huge: 64 << 10}),
			0, 0},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			script := acptest.Script{NewSession: acptest.NewSessionScript{SessionIDs: []string{"real"}},
				Prompts: []acptest.Turn{{Steps: append(tt.flood, acptest.Step{Text: "still here"})}}}
			h, rec := newHostAndRecorder(t, nil)
			id := fmt.Sprintf("f%d", i)
			cfg := agentConfig(t, id, script)
			cfg.EarlyUpdates = tt.limits
			b, err := h.Start(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			s, err := b.OpenSession(waitfor.Context(t), SessionConfig{Cwd: "/w"})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.Prompt(waitfor.Context(t), acpclient.TextBlock("x")); err != nil {
				t.Fatal(err)
			}
			rec.waitFor("turn end", func(ev Event) bool { return ev.Kind == KindTurnEnd })
			count, bytes := b.earlySize()
			if count > tt.wantCount || bytes > tt.wantBytes || (tt.wantCount > 0 && count == 0) {
				t.Errorf("early buffer holds %d updates, %d bytes; cap %d, %d bytes", count, bytes, tt.wantCount, tt.wantBytes)
			}
			reports := dropReports(rec)
			if len(reports) != 1 {
				t.Fatalf("%d drop reports, want exactly 1: %s", len(reports), rec.summary())
			}
			if ev := reports[0]; ev.Bridge != id || ev.Session != "" || !strings.Contains(ev.Err.Error(), `"ghost"`) {
				t.Errorf("drop report %s/%s: %v", ev.Bridge, ev.Session, ev.Err)
			}
			if got := kinds(rec.of(id, "real"), KindSession); !strings.Contains(strings.Join(got, ","), "text:still here") {
				t.Errorf("the real session lost its update: %q", got)
			}
		})
	}
}

func TestUnclaimedEarlyUpdatesArePurged(t *testing.T) {
	clock := fakeClock{fakeclock.New()}
	ttl := 5 * time.Second
	script := acptest.Script{Prompts: []acptest.Turn{{Steps: ghostSteps(3, acptest.Step{Text: "boo"})}}}
	h, rec := newHostAndRecorder(t, nil)
	cfg := agentConfig(t, "p", script)
	cfg.Clock, cfg.EarlyUpdates = clock, EarlyUpdateLimits{TTL: ttl}
	b, err := h.Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	s, err := b.OpenSession(waitfor.Context(t), SessionConfig{Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	for round := range 2 {
		if _, err := s.Prompt(waitfor.Context(t), acpclient.TextBlock("x")); err != nil {
			t.Fatal(err)
		}
		if n, _ := b.earlySize(); n != 3 {
			t.Fatalf("round %d: %d early updates held, want 3", round, n)
		}
		if !clock.WaitForTimers(1, 5*time.Second) {
			t.Fatal("no purge timer armed")
		}
		clock.Advance(ttl - time.Second)
		if n, _ := b.earlySize(); n != 3 {
			t.Fatalf("round %d: purged before the TTL (%d left)", round, n)
		}
		clock.Advance(time.Second)
		waitEarlySize(t, b, 0)
		if _, bytes := b.earlySize(); bytes != 0 {
			t.Fatalf("round %d: %d bytes accounted for an empty buffer", round, bytes)
		}
	}
	// Reported once per bridge, although two batches were dropped.
	reports := dropReports(rec)
	if len(reports) != 1 || !strings.Contains(reports[0].Err.Error(), "no session claimed them") {
		t.Fatalf("drop reports: %v", reports)
	}
	if _, err := s.Prompt(waitfor.Context(t), acpclient.TextBlock("x")); err != nil {
		t.Fatal(err)
	}
	b.Close()
	if n, _ := b.earlySize(); n != 0 {
		t.Errorf("Close left %d early updates", n)
	}
	if p := clock.Pending(); p != 0 {
		t.Errorf("%d timers pending after Close", p)
	}
}

// A session/new that takes long (here: the agent asks the user a question
// first) keeps the updates it sent before answering, however much time
// passes meanwhile.
func TestEarlyUpdatesSurviveSlowSessionNew(t *testing.T) {
	clock := fakeClock{fakeclock.New()}
	ttl := 5 * time.Second
	ask := acptest.Step{Request: &acptest.Request{Method: "elicitation/create", Params: raw(
		`{"sessionId":"slow","message":"Name?","mode":"form","requestedSchema":{"type":"object","properties":{}}}`)}}
	script := acptest.Script{NewSession: acptest.NewSessionScript{SessionIDs: []string{"slow"},
		Steps: []acptest.Step{{Text: "before"}, ask}}}
	h, rec := newHostAndRecorder(t, nil)
	cfg := agentConfig(t, "s", script)
	cfg.Clock, cfg.EarlyUpdates, cfg.ElicitationModes = clock, EarlyUpdateLimits{TTL: ttl}, []string{"form"}
	b, err := h.Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	opened := make(chan error, 1)
	go func() {
		_, err := b.OpenSession(waitfor.Context(t), SessionConfig{Cwd: "/w"})
		opened <- err
	}()
	ev := rec.waitFor("question", func(ev Event) bool { return ev.Kind == KindElicitation })
	waitEarlySize(t, b, 1)
	clock.Advance(3 * ttl)
	// The answer's report is one more early update: its arrival purges
	// whatever expired.
	ev.Elicitation.Accept(map[string]any{})
	if err := waitfor.Recv(t, opened, "opened"); err != nil {
		t.Fatal(err)
	}
	rec.waitFor("session ready", func(ev Event) bool { return ev.Kind == KindSession && ev.Session == "slow" })
	var got strings.Builder // deltas may be merged while the consumer lags
	for _, ev := range rec.of("s", "slow") {
		if ev.Kind == KindText {
			got.WriteString(ev.Text)
		}
	}
	if !strings.HasPrefix(got.String(), "beforerequest elicitation/create") {
		t.Fatalf("session text %q", got.String())
	}
	if r := dropReports(rec); len(r) != 0 {
		t.Fatalf("dropped: %v", r[0].Err)
	}
}

// session/load's replay goes to the session being loaded, however long it
// is: its id is known, so nothing of it is an early update.
func TestLoadReplayIsNotCappedAsEarly(t *testing.T) {
	replay := make([]acptest.Step, 40)
	for i := range replay {
		replay[i] = acptest.Step{Text: fmt.Sprintf("old %d", i)}
	}
	script := acptest.Script{LoadSession: acptest.LoadSessionScript{Sessions: []string{"old"}, Replay: replay}}
	h, rec := newHostAndRecorder(t, nil)
	cfg := agentConfig(t, "l", script)
	cfg.EarlyUpdates = EarlyUpdateLimits{MaxUpdates: 5, MaxBytes: 1 << 10}
	b, err := h.Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	s, err := b.OpenSession(waitfor.Context(t), SessionConfig{Cwd: "/w", ResumeID: "old"})
	if err != nil {
		t.Fatal(err)
	}
	if s.ID() != "old" {
		t.Fatalf("session %q, want the loaded one", s.ID())
	}
	rec.waitFor("session ready", func(ev Event) bool { return ev.Kind == KindSession && ev.Session == "old" })
	// Deltas may be merged while the consumer lags: compare the text.
	var got, want strings.Builder
	for _, ev := range rec.of("l", "old") {
		if ev.Kind == KindText && ev.Replay {
			got.WriteString(ev.Text)
		}
	}
	for _, st := range replay {
		want.WriteString(st.Text)
	}
	if got.String() != want.String() {
		t.Fatalf("replayed %q, want %q", got.String(), want.String())
	}
	if r := dropReports(rec); len(r) != 0 {
		t.Fatalf("dropped: %v", r[0].Err)
	}
}

func textUpdate(session, text string) *acpclient.SessionNotification {
	return &acpclient.SessionNotification{SessionID: session, Update: &acpclient.AgentMessageChunk{
		ContentChunk: acpclient.ContentChunk{Content: acpclient.ContentBlock{Type: "text", Text: text}}}}
}

func TestEarlyBufferEvictsOldestFirst(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	e := newEarlyBuffer(EarlyUpdateLimits{MaxUpdates: 3})
	for i, id := range []string{"a", "b", "a", "b", "a"} {
		e.add(textUpdate(id, fmt.Sprint(i)), nil, now)
	}
	texts := func(us []runUpdate) (out []string) {
		for _, u := range us {
			out = append(out, u.Note.Update.(*acpclient.AgentMessageChunk).Content.Text)
		}
		return out
	}
	if got := texts(e.claim("a")); strings.Join(got, ",") != "2,4" {
		t.Errorf("a kept %q, want the newest, in order", got)
	}
	if got := texts(e.claim("b")); strings.Join(got, ",") != "3" {
		t.Errorf("b kept %q", got)
	}
	if e.order.Len() != 0 || e.bytes != 0 || len(e.byID) != 0 {
		t.Errorf("after claiming everything: %d updates, %d bytes, %d ids", e.order.Len(), e.bytes, len(e.byID))
	}
	if e.droppedUpdates != 2 {
		t.Errorf("%d drops counted, want 2", e.droppedUpdates)
	}

	// An update larger than the whole buffer goes alone.
	e = newEarlyBuffer(EarlyUpdateLimits{MaxBytes: 4 << 10})
	e.add(textUpdate("a", "small"), nil, now)
	if drop := e.add(textUpdate("a", strings.Repeat("x", 8<<10)), nil, now); drop.updates != 1 {
		t.Errorf("oversized update: %+v", drop)
	}
	if got := texts(e.claim("a")); strings.Join(got, ",") != "small" {
		t.Errorf("kept %q", got)
	}
}

func TestEarlyBufferAgeCountsFromTheLastOpen(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ttl := 10 * time.Second
	e := newEarlyBuffer(EarlyUpdateLimits{TTL: ttl})
	e.opening = 1
	e.add(textUpdate("a", "1"), nil, t0)
	if drop := e.add(textUpdate("a", "2"), nil, t0.Add(time.Hour)); drop.updates != 0 {
		t.Fatalf("purged while an open is in flight: %+v", drop)
	}
	if _, ok := e.nextExpiry(t0.Add(time.Hour)); ok {
		t.Error("an expiry is scheduled while an open is in flight")
	}
	e.opening, e.openEnded = 0, t0.Add(time.Hour)
	if wait, ok := e.nextExpiry(t0.Add(time.Hour + time.Second)); !ok || wait != ttl-time.Second {
		t.Errorf("next expiry %v %v, want %v after the open ended", wait, ok, ttl-time.Second)
	}
	var drop earlyDrop
	e.purgeExpired(t0.Add(time.Hour+ttl-time.Nanosecond), &drop)
	if drop.updates != 0 {
		t.Fatalf("purged before the TTL: %+v", drop)
	}
	e.purgeExpired(t0.Add(time.Hour+ttl), &drop)
	if drop.updates != 2 || e.order.Len() != 0 {
		t.Fatalf("purge at the TTL dropped %d, left %d", drop.updates, e.order.Len())
	}
}

func TestNotificationSizeCoversWhatIsHeld(t *testing.T) {
	text := strings.Repeat("y", 100<<10)
	line := fmt.Sprintf(`{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":%q}}}`, text)
	var decoded acpclient.SessionNotification
	if err := json.Unmarshal([]byte(line), &decoded); err != nil {
		t.Fatal(err)
	}
	// The decoded text (the raw update the buffer holds beside it is
	// counted by add).
	if got := notificationSize(&decoded); got < int64(len(text)) {
		t.Errorf("text delta: size %d, want at least %d", got, len(text))
	}
	// Empty objects cost far more decoded than on the wire.
	entries := strings.TrimSuffix(strings.Repeat(`{},`, 1000), ",")
	plan := `{"sessionId":"s","update":{"sessionUpdate":"plan","entries":[` + entries + `]}}`
	var planned acpclient.SessionNotification
	if err := json.Unmarshal([]byte(plan), &planned); err != nil {
		t.Fatal(err)
	}
	if got, min := notificationSize(&planned), int64(1000*4*16); got < min {
		t.Errorf("plan of 1000 empty entries: size %d, want at least %d", got, min)
	}
}

// Chunks held for a session not yet known are kept whole while the chunks
// after them arrive: the connection reuses a chunk's memory once a run has
// been delivered, so what the bridge holds past that must be its own copy.
func TestEarlyChunksKeptWhole(t *testing.T) {
	var steps []acptest.Step
	var want strings.Builder
	for i := range 300 {
		text := fmt.Sprintf("s%d ", i)
		steps = append(steps, acptest.Step{Text: text})
		want.WriteString(text)
	}
	steps = append(steps, ghostSteps(300, acptest.Step{Text: "overwritten? "})...)
	script := acptest.Script{NewSession: acptest.NewSessionScript{SessionIDs: []string{"slow"}, Steps: steps}}
	h, rec := newHostAndRecorder(t, nil)
	b, err := h.Start(context.Background(), agentConfig(t, "s", script))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.OpenSession(waitfor.Context(t), SessionConfig{Cwd: "/w"}); err != nil {
		t.Fatal(err)
	}
	rec.waitFor("session ready", func(ev Event) bool { return ev.Kind == KindSession && ev.Session == "slow" })
	waitEarlySize(t, b, 300) // the ghost's
	var got strings.Builder
	for _, ev := range rec.of("s", "slow") {
		if ev.Kind == KindText {
			got.WriteString(ev.Text)
		}
	}
	if got.String() != want.String() {
		t.Fatalf("the held chunks became %.200q…, want %.200q…", got.String(), want.String())
	}
}

// The raw update held beside an early notification counts against the
// buffer's bytes: a small update with large raw bytes does not fit.
func TestEarlyBufferCountsRawBytes(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	e := newEarlyBuffer(EarlyUpdateLimits{MaxBytes: 4 << 10})
	if drop := e.add(textUpdate("a", "small"), json.RawMessage(strings.Repeat(" ", 8<<10)), now); drop.updates != 1 || drop.reason != dropOversized {
		t.Errorf("an update with 8 KiB of raw bytes in a 4 KiB buffer: %+v, want dropped as oversized", drop)
	}
}
