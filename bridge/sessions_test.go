package bridge

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/acptest"
	"github.com/acphost/acphost/internal/waitfor"
)

// withDelete is the fake agent's default capabilities plus session/delete.
var withDelete = raw(`{"loadSession":true,"sessionCapabilities":{"list":{},"resume":{},"close":{},"delete":{}}}`)

// held reports how many sessions the bridge still holds, by native id and
// by key.
func held(b *Bridge) (byID, byKey int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.sessions), len(b.open)
}

// Close cancels the running turn and waits for it, sends session/close,
// leaves the bridge and refuses every later call; a session_closed event
// comes last, the record stays, and the key opens the session again.
func TestCloseEndsTheTurnAndFreesTheSession(t *testing.T) {
	tr := &acptest.Transport{Script: acptest.Script{
		NewSession: acptest.NewSessionScript{SessionIDs: []string{"sess_C"}},
		Prompts:    []acptest.Turn{{Match: "wait", Steps: []acptest.Step{{Text: "busy"}, {WaitCancel: true}}}},
	}}
	j := newLifeJournal()
	h, rec := newHostAndRecorder(t, &HostOptions{Journal: j})
	b, err := h.Start(ctxT(t), Config{ID: "c", Transport: tr})
	if err != nil {
		t.Fatal(err)
	}
	s, err := b.OpenSession(ctxT(t), SessionConfig{Cwd: "/w", Key: "k"})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan string, 1)
	go func() {
		stop, _ := s.Prompt(ctxT(t), acpclient.TextBlock("wait"))
		done <- stop
	}()
	rec.waitFor("busy", func(ev Event) bool { return ev.Text == "busy" })
	if err := s.Close(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	select {
	case stop := <-done:
		if stop != acpclient.StopCancelled {
			t.Errorf("turn ended %q, want cancelled", stop)
		}
	default:
		t.Fatal("Close returned before the running turn ended")
	}
	a := tr.Agents()[0]
	if len(sentTo(a, "session/cancel")) != 1 || len(sentTo(a, "session/close")) != 1 {
		t.Errorf("agent got %d cancels and %d closes, want one each", len(sentTo(a, "session/cancel")), len(sentTo(a, "session/close")))
	}
	if byID, byKey := held(b); byID != 0 || byKey != 0 {
		t.Errorf("bridge still holds %d sessions by id, %d by key", byID, byKey)
	}
	if b.Session("sess_C") != nil || b.Session("k") != nil {
		t.Error("the closed session is still found")
	}
	if _, err := s.Prompt(ctxT(t), acpclient.TextBlock("more")); !errors.Is(err, ErrSessionClosed) {
		t.Errorf("Prompt after Close: %v, want ErrSessionClosed", err)
	}
	if err := s.SetModel(ctxT(t), "m"); !errors.Is(err, ErrSessionClosed) {
		t.Errorf("SetModel after Close: %v, want ErrSessionClosed", err)
	}
	if err := s.SetGrants(ctxT(t), []string{"/tmp"}); !errors.Is(err, ErrSessionClosed) {
		t.Errorf("SetGrants after Close: %v, want ErrSessionClosed", err)
	}
	if _, err := s.Compact(ctxT(t)); !errors.Is(err, ErrSessionClosed) {
		t.Errorf("Compact after Close: %v, want ErrSessionClosed", err)
	}
	if _, err := s.Steer(ctxT(t), "more", SteerQueue); !errors.Is(err, ErrSessionClosed) {
		t.Errorf("Steer after Close: %v, want ErrSessionClosed", err)
	}
	if _, err := s.Enqueue(ctxT(t), acpclient.TextBlock("more")); !errors.Is(err, ErrSessionClosed) {
		t.Errorf("Enqueue after Close: %v, want ErrSessionClosed", err)
	}
	if err := s.Close(ctxT(t)); err != nil {
		t.Errorf("second Close: %v", err)
	}
	closed := rec.waitFor("closed", func(ev Event) bool { return ev.Kind == KindSessionClosed })
	if closed.Key != "k" || closed.Session != "sess_C" {
		t.Errorf("closed event key %q session %q", closed.Key, closed.Session)
	}
	if _, ok := j.record("k"); !ok {
		t.Fatal("Close dropped the journal's record")
	}
	again, err := b.OpenSession(ctxT(t), SessionConfig{Key: "k"})
	if err != nil {
		t.Fatal(err)
	}
	if again.ID() != "sess_C" || !again.Ready().Resumed {
		t.Errorf("reopened %q, ready %+v: want sess_C resumed", again.ID(), again.Ready())
	}
}

// Close waits for the turn only as long as ctx allows; the session then
// refuses new turns (once the running one has ended, as it still holds
// the session), and a later Close finishes the job.
func TestCloseIsBoundedByItsContext(t *testing.T) {
	tr := &acptest.Transport{Script: acptest.Script{
		Prompts: []acptest.Turn{{Match: "stubborn", IgnoreCancel: true, Steps: []acptest.Step{{Text: "busy"}, {Sleep: acptest.Duration(time.Hour)}}}},
	}}
	h, rec := newHostAndRecorder(t, nil)
	b, err := h.Start(ctxT(t), Config{ID: "cb", Transport: tr})
	if err != nil {
		t.Fatal(err)
	}
	s, err := b.OpenSession(ctxT(t), SessionConfig{Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := s.Prompt(ctxT(t), acpclient.TextBlock("stubborn"))
		done <- err
	}()
	rec.waitFor("busy", func(ev Event) bool { return ev.Text == "busy" })
	ctx, cancel := context.WithTimeout(ctxT(t), 20*time.Millisecond)
	defer cancel()
	if err := s.Close(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Close of a turn that ignores cancel: %v, want the deadline", err)
	}
	b.Close() // ends the turn with the agent
	waitfor.Closed(t, done, "the call to return")
	if _, err := s.Prompt(ctxT(t), acpclient.TextBlock("more")); !errors.Is(err, ErrSessionClosed) {
		t.Errorf("Prompt after an unfinished Close: %v, want ErrSessionClosed", err)
	}
	if err := s.Close(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	if byID, byKey := held(b); byID != 0 || byKey != 0 {
		t.Errorf("bridge still holds %d sessions by id, %d by key", byID, byKey)
	}
}

// A long-lived bridge that opens and closes many sessions holds none of
// them afterwards, and no goroutine of theirs stays.
func TestManySessionsOpenedAndClosedLeaveNothing(t *testing.T) {
	h, _ := newHostAndRecorder(t, nil)
	b, err := h.Start(ctxT(t), Config{ID: "many", Transport: &acptest.Transport{}})
	if err != nil {
		t.Fatal(err)
	}
	warm, err := b.OpenSession(ctxT(t), SessionConfig{Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := warm.Prompt(ctxT(t), acpclient.TextBlock("hi")); err != nil {
		t.Fatal(err)
	}
	if err := warm.Close(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	base := goleak.IgnoreCurrent()
	for i := range 100 {
		s, err := b.OpenSession(ctxT(t), SessionConfig{Cwd: "/w"})
		if err != nil {
			t.Fatal(err)
		}
		if i%10 == 0 {
			if _, err := s.Prompt(ctxT(t), acpclient.TextBlock("hi")); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Close(ctxT(t)); err != nil {
			t.Fatal(err)
		}
	}
	if byID, byKey := held(b); byID != 0 || byKey != 0 {
		t.Errorf("after 100 sessions the bridge holds %d by id, %d by key", byID, byKey)
	}
	b.mu.Lock()
	early := b.early.order.Len()
	b.mu.Unlock()
	if early != 0 {
		t.Errorf("%d early updates held for closed sessions", early)
	}
	if err := goleak.Find(base); err != nil {
		t.Errorf("goroutines left by closed sessions: %v", err)
	}
}

// Delete closes the session, deletes it on the agent and from the journal.
// Host.DeleteSession does the same for a session that is not open.
func TestDeleteRemovesTheSessionEverywhere(t *testing.T) {
	tr := &acptest.Transport{Script: acptest.Script{
		Initialize:  acptest.InitializeScript{AgentCapabilities: withDelete},
		NewSession:  acptest.NewSessionScript{SessionIDs: []string{"sess_D1"}},
		LoadSession: acptest.LoadSessionScript{Sessions: []string{"sess_D2"}},
	}}
	j := newLifeJournal()
	j.SaveSession(ctxT(t), "rec", Record{Key: "rec", Bridge: "del", NativeSessionID: "sess_D2"})
	h, _ := newHostAndRecorder(t, &HostOptions{Journal: j})
	b, err := h.Start(ctxT(t), Config{ID: "del", Transport: tr})
	if err != nil {
		t.Fatal(err)
	}
	s, err := b.OpenSession(ctxT(t), SessionConfig{Cwd: "/w", Key: "open"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	if err := h.DeleteSession(ctxT(t), "rec"); err != nil {
		t.Fatal(err)
	}
	var deleted []string
	for _, m := range sentTo(tr.Agents()[0], "session/delete") {
		deleted = append(deleted, string(m.Params))
	}
	if want := []string{`{"sessionId":"sess_D1"}`, `{"sessionId":"sess_D2"}`}; !reflect.DeepEqual(deleted, want) {
		t.Errorf("session/delete sent %q, want %q", deleted, want)
	}
	for _, key := range []string{"open", "rec"} {
		if _, ok := j.record(key); ok {
			t.Errorf("record %s still in the journal", key)
		}
	}
	if held, _ := held(b); held != 0 {
		t.Errorf("bridge holds %d sessions after Delete", held)
	}
	if err := h.DeleteSession(ctxT(t), "rec"); !errors.Is(err, ErrUnknownSession) {
		t.Errorf("deleting a deleted key: %v, want ErrUnknownSession", err)
	}
}

// ListSessions merges the agent's list (every page), the journal's records
// of this bridge and the open sessions; Host.Sessions lists the journal's
// of every bridge and the open ones.
func TestListSessionsMergesAgentJournalAndOpen(t *testing.T) {
	tr := &acptest.Transport{Script: acptest.Script{
		NewSession:  acptest.NewSessionScript{SessionIDs: []string{"sess_open"}},
		LoadSession: acptest.LoadSessionScript{Sessions: []string{"sess_a1", "sess_a2", "sess_a3"}},
		SessionList: acptest.SessionListScript{PageSize: 1},
	}}
	j := newLifeJournal()
	now := time.Now()
	j.SaveSession(ctxT(t), "k1", Record{Key: "k1", Bridge: "l", NativeSessionID: "sess_a1", Title: "one", UpdatedAt: now.Add(-time.Minute)})
	j.SaveSession(ctxT(t), "k2", Record{Key: "k2", Bridge: "l", NativeSessionID: "sess_gone", UpdatedAt: now.Add(-2 * time.Minute)})
	j.SaveSession(ctxT(t), "k3", Record{Key: "k3", Bridge: "other", NativeSessionID: "sess_x", UpdatedAt: now.Add(-3 * time.Minute)})
	// k5's agent replaced sess_old by sess_a3: the agent's entry is k5's.
	j.SaveSession(ctxT(t), "k5", Record{Key: "k5", Bridge: "l", NativeSessionID: "sess_new",
		NativeHistory: []NativeSession{{ID: "sess_a3"}, {ID: "sess_new", Reason: ReplacedAfterRestart}}, UpdatedAt: now.Add(-4 * time.Minute)})
	h, _ := newHostAndRecorder(t, &HostOptions{Journal: j})
	b, err := h.Start(ctxT(t), Config{ID: "l", Transport: tr})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.OpenSession(ctxT(t), SessionConfig{Cwd: "/w", Key: "k4"}); err != nil {
		t.Fatal(err)
	}
	list, err := b.ListSessions(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		Key, Native                  string
		Open, Journaled, AgentListed bool
	}
	got := map[row]bool{}
	for _, e := range list {
		got[row{e.Key, e.NativeID, e.Open, e.Journaled, e.AgentListed}] = true
		if (e.Session != nil) != e.Open || (e.Record != nil) != e.Journaled {
			t.Errorf("entry %+v: Session and Record must match Open and Journaled", e)
		}
	}
	want := map[row]bool{
		{"k4", "sess_open", true, true, true}:   true,
		{"k1", "sess_a1", false, true, true}:    true,
		{"k2", "sess_gone", false, true, false}: true,
		{"k5", "sess_new", false, true, true}:   true,
		{"", "sess_a2", false, false, true}:     true,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ListSessions rows %v, want %v", got, want)
	}
	if list[0].Key != "k4" {
		t.Errorf("first entry %q, want the most recently updated (k4)", list[0].Key)
	}
	all, err := h.Sessions(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, e := range all {
		keys = append(keys, e.Key)
	}
	// The agent's own sess_a2 has no key; it sorts last (no update time).
	if want := []string{"k4", "k1", "k2", "k3", "k5", ""}; !reflect.DeepEqual(keys, want) {
		t.Errorf("Host.Sessions keys %q, want %q", keys, want)
	}
}

// A closed session leaves the Host's Snapshot (the live state is of open
// sessions), while a view rebuilt from its events says it is closed; the
// same key opened again is back in the snapshot.
func TestSnapshotLeavesClosedSessionsOut(t *testing.T) {
	tr := &acptest.Transport{Script: acptest.Script{NewSession: acptest.NewSessionScript{SessionIDs: []string{"sess_1", "sess_2"}}}}
	h, rec := newHostAndRecorder(t, nil)
	b, err := h.Start(ctxT(t), Config{ID: "v", Transport: tr})
	if err != nil {
		t.Fatal(err)
	}
	s, err := b.OpenSession(ctxT(t), SessionConfig{Cwd: "/w", Key: "k"})
	if err != nil {
		t.Fatal(err)
	}
	rec.waitFor("ready", func(ev Event) bool { return ev.Kind == KindSession })
	if snap := h.Snapshot(); len(snap.Sessions) != 1 || snap.Sessions[0].Key != "k" {
		t.Fatalf("snapshot of an open session: %+v", snap.Sessions)
	}
	if err := s.Close(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	closed := rec.waitFor("closed", func(ev Event) bool { return ev.Kind == KindSessionClosed })
	if snap := h.Snapshot(); len(snap.Sessions) != 0 {
		t.Fatalf("snapshot after Close still holds %+v", snap.Sessions)
	}
	var v SessionView
	v.Apply(Event{Key: "k", Kind: KindTurnStart, Turn: 1})
	v.Apply(closed)
	if !v.Closed || v.Busy {
		t.Fatalf("rebuilt view after session_closed: %+v", v)
	}
	if _, err := b.OpenSession(ctxT(t), SessionConfig{Cwd: "/w", Key: "k"}); err != nil {
		t.Fatal(err)
	}
	rec.waitFor("ready again", func(ev Event) bool { return ev.Kind == KindSession && ev.Session == "sess_2" })
	if snap := h.Snapshot(); len(snap.Sessions) != 1 || snap.Sessions[0].Closed {
		t.Fatalf("snapshot after reopening: %+v", snap.Sessions)
	}
}
