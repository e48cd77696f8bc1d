package journal

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/acphost/acphost/bridge"
)

// richEvents are events of several kinds with their nested fields set.
func richEvents() []bridge.Event {
	tool := textEvent(2, "k1", 2)
	tool.Kind, tool.Text, tool.MessageID = bridge.KindToolStart, "", ""
	tool.Tool = &bridge.ToolCall{ID: "call_1", Title: "Read a.go", Kind: "read", Status: "pending", Name: "read_file",
		RawInput: json.RawMessage(`{"path":"a.go"}`)}
	tool.Raw = json.RawMessage(`{"sessionUpdate":"tool_call","toolCallId":"call_1"}`)
	info := textEvent(3, "k1", 3)
	info.Kind, info.Text, info.MessageID, info.Turn = bridge.KindSessionInfo, "", "", 0
	info.SessionInfo = &bridge.SessionInfo{Title: "Fix the build", TitleChanged: true}
	usage := textEvent(4, "k1", 4)
	usage.Kind, usage.Text, usage.MessageID, usage.Late = bridge.KindUsage, "", "", true
	usage.Usage = &bridge.Usage{Known: true, Used: 1200, Size: 200000, Percent: 0.6}
	decision := textEvent(5, "k1", 5)
	decision.Kind, decision.Text, decision.MessageID = bridge.KindDecision, "", ""
	decision.Decision = &bridge.Decision{Request: "p1", Type: "permission", Outcome: "cancelled", By: "policy", Rule: "Ask mode"}
	replay := textEvent(6, "k1", 6)
	replay.Kind, replay.Replay = bridge.KindUserText, true
	exited := textEvent(7, "", 1)
	exited.Kind, exited.Text, exited.MessageID, exited.Turn = bridge.KindExited, "", "", 0
	return []bridge.Event{textEvent(1, "k1", 1), tool, info, usage, decision, replay, exited}
}

// withoutErr drops Err, which the journal stores as text but this
// package does not promise to decode.
func withoutErr(events []bridge.Event) []bridge.Event {
	out := slices.Clone(events)
	for i := range out {
		out[i].Err = nil
	}
	return out
}

func TestAppendReadRoundTrip(t *testing.T) {
	db := openTest(t)
	want := richEvents()
	mustAppend(t, db, want[:3]...)
	mustAppend(t, db, want[3:]...)
	got := withoutErr(mustRead(t, db, bridge.EventQuery{}))
	if !reflect.DeepEqual(got, want) {
		gj, _ := json.Marshal(got)
		wj, _ := json.Marshal(want)
		t.Fatalf("read back\n%s\nwant\n%s", gj, wj)
	}
}

func TestAppendStoresErrorText(t *testing.T) {
	db := openTest(t)
	ev := textEvent(1, "k1", 1)
	ev.Kind, ev.Err = bridge.KindError, errors.New("disk on fire")
	mustAppend(t, db, ev)
	var doc string
	if err := db.read.QueryRow("SELECT event FROM events WHERE pos = 1").Scan(&doc); err != nil {
		t.Fatal(err)
	}
	var fields struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(doc), &fields); err != nil || fields.Error.Message != "disk on fire" {
		t.Fatalf("stored event %s has no error text (%v)", doc, err)
	}
	got, err := db.ReadEvents(context.Background(), bridge.EventQuery{})
	if err != nil || len(got) != 1 {
		t.Fatalf("ReadEvents = %v, %v", got, err)
	}
	var ee *bridge.EventError
	if !errors.As(got[0].Err, &ee) || ee.Message != "disk on fire" {
		t.Fatalf("read back error %v, want an EventError with the text", got[0].Err)
	}
}

func TestReadEventsFilters(t *testing.T) {
	db := openTest(t)
	var events []bridge.Event
	for pos := uint64(1); pos <= 9; pos++ {
		key := []string{"", "k1", "k2"}[pos%3]
		ev := textEvent(pos, key, pos)
		if pos > 6 {
			ev.Bridge = "other"
		}
		events = append(events, ev)
	}
	mustAppend(t, db, events...)
	for _, tc := range []struct {
		name string
		q    bridge.EventQuery
		want []uint64
	}{
		{"all", bridge.EventQuery{}, posRange(1, 9)},
		{"after", bridge.EventQuery{After: 6}, []uint64{7, 8, 9}},
		{"after the end", bridge.EventQuery{After: 9}, nil},
		{"key", bridge.EventQuery{Key: "k1"}, []uint64{1, 4, 7}},
		{"key after", bridge.EventQuery{Key: "k2", After: 2}, []uint64{5, 8}},
		{"bridge", bridge.EventQuery{Bridge: "other"}, []uint64{7, 8, 9}},
		{"bridge and key", bridge.EventQuery{Bridge: "b", Key: "k2"}, []uint64{2, 5}},
		{"limit", bridge.EventQuery{After: 2, Limit: 3}, []uint64{3, 4, 5}},
		{"unknown key", bridge.EventQuery{Key: "nope"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := positions(mustRead(t, db, tc.q)); !slices.Equal(got, tc.want) {
				t.Fatalf("ReadEvents(%+v) = %v, want %v", tc.q, got, tc.want)
			}
		})
	}
}

func TestReadEventsDefaultLimit(t *testing.T) {
	db := openTest(t)
	var pos uint64
	mustAppend(t, db, flood(defaultLimit+5, &pos, []string{"k1"}, map[string]uint64{})...)
	if got := positions(mustRead(t, db, bridge.EventQuery{})); !slices.Equal(got, posRange(1, defaultLimit)) {
		t.Fatalf("read %d events (%v…), want the first %d", len(got), got[:min(3, len(got))], defaultLimit)
	}
}

func TestReadEventsInPosOrder(t *testing.T) {
	db := openTest(t)
	// Batches appended out of Pos order still read back in Pos order.
	mustAppend(t, db, textEvent(5, "k1", 3), textEvent(4, "k1", 2))
	mustAppend(t, db, textEvent(1, "k1", 1))
	if got := positions(mustRead(t, db, bridge.EventQuery{})); !slices.Equal(got, []uint64{1, 4, 5}) {
		t.Fatalf("order %v", got)
	}
}

func TestAppendBatchIsAtomic(t *testing.T) {
	db := openTest(t)
	mustAppend(t, db, textEvent(1, "k1", 1))
	// Pos 1 again in the middle of the batch: none of it may stay.
	err := db.Append(context.Background(), []bridge.Event{textEvent(2, "k1", 2), textEvent(1, "k2", 1), textEvent(3, "k1", 3)})
	if err == nil {
		t.Fatal("appending a stored Pos again succeeded")
	}
	if got := positions(mustRead(t, db, bridge.EventQuery{})); !slices.Equal(got, []uint64{1}) {
		t.Fatalf("after the failed batch: %v", got)
	}
	assertCounters(t, db, 1, map[string]uint64{"k1": 1, "k2": 0})
	if _, ok, _ := db.LoadSession(context.Background(), "k2"); ok {
		t.Fatal("the failed batch created a session row")
	}
}

func TestAppendRefusesUnnumberedEvent(t *testing.T) {
	db := openTest(t)
	err := db.Append(context.Background(), []bridge.Event{textEvent(1, "k1", 1), textEvent(0, "k1", 2)})
	if !errors.Is(err, ErrNoPos) {
		t.Fatalf("Append of an event without Pos: %v, want ErrNoPos", err)
	}
	assertCounters(t, db, 0, map[string]uint64{"k1": 0})
}

func assertCounters(t *testing.T, db *DB, wantPos uint64, wantSeq map[string]uint64) {
	t.Helper()
	ctx := context.Background()
	pos, err := db.LastPos(ctx)
	if err != nil || pos != wantPos {
		t.Errorf("LastPos = %d, %v; want %d", pos, err, wantPos)
	}
	for key, want := range wantSeq {
		if seq, err := db.LastSeq(ctx, key); err != nil || seq != want {
			t.Errorf("LastSeq(%q) = %d, %v; want %d", key, seq, err, want)
		}
	}
}

func TestLastPosAndLastSeq(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	assertCounters(t, db, 0, map[string]uint64{"k1": 0, "": 0})
	pos, last := uint64(0), map[string]uint64{}
	mustAppend(t, db, flood(7, &pos, []string{"k1", "k2", ""}, last)...)
	mustAppend(t, db, flood(5, &pos, []string{"k2"}, last)...)
	assertCounters(t, db, 12, map[string]uint64{"k1": 3, "k2": 7, "": 0, "unknown": 0})
	// Positions are cursors: deleting the latest events must not let
	// them be handed out again.
	if err := db.DeleteSession(ctx, "k2"); err != nil {
		t.Fatal(err)
	}
	assertCounters(t, db, 12, map[string]uint64{"k1": 3, "k2": 0})
}

func TestAppendMaintainsSessionRow(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	first := textEvent(1, "k1", 1)
	title := textEvent(2, "k1", 2)
	title.Kind, title.SessionInfo = bridge.KindSessionInfo, &bridge.SessionInfo{Title: "First title", TitleChanged: true}
	mustAppend(t, db, first, title, textEvent(3, "", 1))
	rec, ok, err := db.LoadSession(ctx, "k1")
	if err != nil || !ok {
		t.Fatalf("LoadSession: %v, %v", ok, err)
	}
	want := bridge.Record{Key: "k1", Bridge: "b", NativeSessionID: "n-k1", Title: "First title",
		CreatedAt: first.Time, UpdatedAt: title.Time}
	if !reflect.DeepEqual(rec, want) {
		t.Fatalf("row after the first batch\n%+v\nwant\n%+v", rec, want)
	}
	// A session_info event that changes something else keeps the title;
	// one that clears it clears it.
	other := textEvent(4, "k1", 3)
	other.Kind, other.SessionInfo = bridge.KindSessionInfo, &bridge.SessionInfo{UpdatedAt: "x", UpdatedAtChanged: true}
	mustAppend(t, db, other)
	if rec, _, _ = db.LoadSession(ctx, "k1"); rec.Title != "First title" || !rec.UpdatedAt.Equal(other.Time) {
		t.Fatalf("after an update-time change: title %q, updated %v", rec.Title, rec.UpdatedAt)
	}
	cleared := textEvent(5, "k1", 4)
	cleared.Kind, cleared.SessionInfo = bridge.KindSessionInfo, &bridge.SessionInfo{TitleChanged: true}
	mustAppend(t, db, cleared)
	if rec, _, _ = db.LoadSession(ctx, "k1"); rec.Title != "" {
		t.Fatalf("after a clearing change: title %q", rec.Title)
	}
	if recs, _ := db.Sessions(ctx); len(recs) != 1 {
		t.Fatalf("agent-wide events made session rows: %+v", recs)
	}
}

// TestRowsOfReusesItsBuffer: encoding a batch allocates its rows and each
// row's document, and no buffer to encode into once one was used.
func TestRowsOfReusesItsBuffer(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's sync.Pool drops buffers")
	}
	ev := textEvent(1, "k1", 1)
	ev.Text = strings.Repeat("chunk 123 ", 230) // a flood's merged text
	batch := []bridge.Event{ev}
	if _, err := rowsOf(batch); err != nil {
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := rowsOf(batch); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 2 {
		t.Errorf("rowsOf allocated %.1f times for one event, want 2 (its rows and its document)", allocs)
	}
}
