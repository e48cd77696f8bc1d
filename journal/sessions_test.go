package journal

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/bridge"
)

// fullRecord sets every field of a Record, so a field added to Record
// without a column fails TestSessionRecordRoundTrip instead of being lost.
func fullRecord(t *testing.T, key string) bridge.Record {
	t.Helper()
	var rec bridge.Record
	v := reflect.ValueOf(&rec).Elem()
	for i := range v.NumField() {
		f, name := v.Field(i), v.Type().Field(i).Name
		switch f.Interface().(type) {
		case string:
			f.SetString(name + "-" + key)
		case bool:
			f.SetBool(true)
		case uint64:
			f.SetUint(uint64(7 + i))
		case time.Time:
			f.Set(reflect.ValueOf(baseTime.Add(time.Duration(i) * time.Hour)))
		case []string:
			f.Set(reflect.ValueOf([]string{"/srv/" + key, "/tmp/" + name}))
		case map[string]string:
			f.Set(reflect.ValueOf(map[string]string{"verbosity": "high-" + key, "web": "true"}))
		case []bridge.NativeSession:
			f.Set(reflect.ValueOf([]bridge.NativeSession{
				{ID: "first-" + key, Since: baseTime},
				{ID: "second-" + key, Reason: "agent crashed; could not resume", Since: baseTime.Add(time.Minute)},
			}))
		case []bridge.QueuedPrompt:
			f.Set(reflect.ValueOf([]bridge.QueuedPrompt{
				{ID: "q-1-" + key, Content: []acpclient.ContentBlock{acpclient.TextBlock("next " + key)}, Text: "next " + key, Queued: baseTime},
				{ID: "q-2-" + key, Content: []acpclient.ContentBlock{acpclient.TextBlock("then")}, Text: "then", Queued: baseTime.Add(time.Second)},
			}))
		case *bridge.ForkOrigin:
			f.Set(reflect.ValueOf(&bridge.ForkOrigin{Parent: "parent-" + key, ParentSession: "native-" + key, AfterTurn: uint64(i), Transcript: true}))
		case *bridge.Worktree:
			f.Set(reflect.ValueOf(&bridge.Worktree{Branch: "acphost/" + key, Base: "main", Dir: "/wt/" + key, DeleteBranch: true, Repo: "/repo"}))
		default:
			t.Fatalf("Record.%s is a %s this test does not fill: give it a column and fill it here", name, f.Type())
		}
	}
	rec.Key = key
	return rec
}

func mustSave(t *testing.T, db *DB, key string, rec bridge.Record) {
	t.Helper()
	if err := db.SaveSession(context.Background(), key, rec); err != nil {
		t.Fatalf("SaveSession(%q): %v", key, err)
	}
}

func mustLoad(t *testing.T, db *DB, key string) bridge.Record {
	t.Helper()
	rec, ok, err := db.LoadSession(context.Background(), key)
	if err != nil || !ok {
		t.Fatalf("LoadSession(%q) = %v, %v", key, ok, err)
	}
	return rec
}

func TestSessionRecordRoundTrip(t *testing.T) {
	db := openTest(t)
	want := fullRecord(t, "k1")
	mustSave(t, db, "k1", want)
	if got := mustLoad(t, db, "k1"); !reflect.DeepEqual(got, want) {
		t.Fatalf("loaded\n%+v\nwant\n%+v", got, want)
	}
	if _, ok, err := db.LoadSession(context.Background(), "k2"); ok || err != nil {
		t.Fatalf("LoadSession of an unknown key = %v, %v", ok, err)
	}
}

func TestSaveSessionReplacesRecord(t *testing.T) {
	db := openTest(t)
	mustSave(t, db, "k1", fullRecord(t, "k1"))
	// A later record with less in it replaces the fields and the history.
	next := bridge.Record{Key: "k1", NativeSessionID: "third", Provider: "codex", Turns: 3,
		NativeHistory: []bridge.NativeSession{{ID: "third", Since: baseTime.Add(time.Hour)}},
		UpdatedAt:     baseTime.Add(48 * time.Hour)}
	mustSave(t, db, "k1", next)
	got := mustLoad(t, db, "k1")
	first := fullRecord(t, "k1")
	want := next
	// Kept because next leaves them empty: what Append also maintains.
	want.Bridge, want.Title, want.CreatedAt = first.Bridge, first.Title, first.CreatedAt
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("loaded\n%+v\nwant\n%+v", got, want)
	}
}

func TestSaveSessionKeepsWhatAppendMaintains(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	title := textEvent(2, "k1", 2)
	title.Kind, title.SessionInfo = bridge.KindSessionInfo, &bridge.SessionInfo{Title: "From the agent", TitleChanged: true}
	mustAppend(t, db, textEvent(1, "k1", 1), title)
	// An older UpdatedAt does not move the row back in the list.
	mustSave(t, db, "k1", bridge.Record{NativeSessionID: "n-k1", Cwd: "/w", UpdatedAt: baseTime.Add(-time.Hour)})
	rec := mustLoad(t, db, "k1")
	if rec.Title != "From the agent" || rec.Bridge != "b" || !rec.CreatedAt.Equal(textEvent(1, "k1", 1).Time) ||
		!rec.UpdatedAt.Equal(title.Time) || rec.Cwd != "/w" {
		t.Fatalf("after SaveSession: %+v", rec)
	}
	assertCounters(t, db, 2, map[string]uint64{"k1": 2})
	// A record that sets a title wins.
	mustSave(t, db, "k1", bridge.Record{NativeSessionID: "n-k1", Title: "Renamed by the user"})
	if rec := mustLoad(t, db, "k1"); rec.Title != "Renamed by the user" {
		t.Fatalf("title %q after saving one", rec.Title)
	}
	mustAppend(t, db, textEvent(3, "k1", 3))
	assertCounters(t, db, 3, map[string]uint64{"k1": 3})
	var lastPos uint64
	if err := db.read.QueryRowContext(ctx, "SELECT last_pos FROM sessions WHERE key = 'k1'").Scan(&lastPos); err != nil || lastPos != 3 {
		t.Fatalf("sessions.last_pos = %d, %v; want 3", lastPos, err)
	}
}

func TestSessionsMostRecentlyUpdatedFirst(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	for i, key := range []string{"old", "new", "mid"} {
		mustSave(t, db, key, bridge.Record{NativeSessionID: "n-" + key,
			UpdatedAt: baseTime.Add(time.Duration([]int{1, 3, 2}[i]) * time.Hour)})
	}
	assertOrder := func(want ...string) {
		t.Helper()
		recs, err := db.Sessions(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range recs {
			got = append(got, r.Key)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("Sessions order %v, want %v", got, want)
		}
	}
	assertOrder("new", "mid", "old")
	// An event makes a session the most recently updated.
	ev := textEvent(1, "old", 1)
	ev.Time = baseTime.Add(5 * time.Hour)
	mustAppend(t, db, ev)
	assertOrder("old", "new", "mid")
}

func TestDeleteSession(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	pos, last := uint64(0), map[string]uint64{}
	mustAppend(t, db, flood(9, &pos, []string{"k1", "k2", ""}, last)...)
	mustSave(t, db, "k1", fullRecord(t, "k1"))
	mustSave(t, db, "k2", fullRecord(t, "k2"))
	if err := db.DeleteSession(ctx, "k1"); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := db.LoadSession(ctx, "k1"); ok || err != nil {
		t.Fatalf("deleted session still loads: %v, %v", ok, err)
	}
	if got := mustRead(t, db, bridge.EventQuery{Key: "k1"}); len(got) != 0 {
		t.Fatalf("deleted session's events remain: %v", positions(got))
	}
	var history int
	if err := db.read.QueryRowContext(ctx, "SELECT count(*) FROM native_sessions WHERE key = 'k1'").Scan(&history); err != nil || history != 0 {
		t.Fatalf("deleted session's native history: %d rows, %v", history, err)
	}
	// The others are untouched.
	if got := positions(mustRead(t, db, bridge.EventQuery{})); !slices.Equal(got, []uint64{2, 3, 5, 6, 8, 9}) {
		t.Fatalf("remaining events %v", got)
	}
	if rec := mustLoad(t, db, "k2"); len(rec.NativeHistory) != 2 {
		t.Fatalf("other session's history: %+v", rec.NativeHistory)
	}
	if err := db.DeleteSession(ctx, "never"); err != nil {
		t.Fatalf("deleting an unknown key: %v", err)
	}
	if err := db.DeleteSession(ctx, ""); !errors.Is(err, ErrNoKey) {
		t.Fatalf("deleting the agent-wide key: %v, want ErrNoKey", err)
	}
	if err := db.SaveSession(ctx, "", bridge.Record{}); !errors.Is(err, ErrNoKey) {
		t.Fatalf("saving without a key: %v, want ErrNoKey", err)
	}
}

func TestReopenKeepsEverything(t *testing.T) {
	path := t.TempDir() + "/journal.db"
	ctx := context.Background()
	db, err := Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	pos, last := uint64(0), map[string]uint64{}
	events := flood(20, &pos, []string{"k1", "k2", ""}, last)
	mustAppend(t, db, events...)
	mustSave(t, db, "k1", fullRecord(t, "k1"))
	recsBefore, err := db.Sessions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = openAt(t, path)
	if got := withoutErr(mustRead(t, db, bridge.EventQuery{})); !reflect.DeepEqual(got, events) {
		t.Fatalf("events after reopening: %v", positions(got))
	}
	recsAfter, err := db.Sessions(ctx)
	if err != nil || !reflect.DeepEqual(recsAfter, recsBefore) {
		t.Fatalf("sessions after reopening: %+v, %v\nbefore: %+v", recsAfter, err, recsBefore)
	}
	assertCounters(t, db, 20, map[string]uint64{"k1": last["k1"], "k2": last["k2"]})
}

func TestStoreMethods(t *testing.T) {
	db := openTest(t)
	var store bridge.Store = db
	rec := fullRecord(t, "app-key")
	before := time.Now()
	if err := store.Save("app-key", rec); err != nil {
		t.Fatal(err)
	}
	got, ok, err := store.Load("app-key")
	if err != nil || !ok {
		t.Fatalf("Load = %v, %v", ok, err)
	}
	if got.UpdatedAt.Before(before.Add(-time.Second)) || got.UpdatedAt.After(time.Now().Add(time.Second)) {
		t.Fatalf("Save did not stamp UpdatedAt: %v", got.UpdatedAt)
	}
	got.UpdatedAt = rec.UpdatedAt
	if !reflect.DeepEqual(got, rec) {
		t.Fatalf("Load\n%+v\nwant\n%+v", got, rec)
	}
	mustAppend(t, db, textEvent(1, "app-key", 1))
	if err := store.Delete("app-key"); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := store.Load("app-key"); ok || err != nil {
		t.Fatalf("Load after Delete = %v, %v", ok, err)
	}
	if got := mustRead(t, db, bridge.EventQuery{}); len(got) != 0 {
		t.Fatalf("Delete left events %v", positions(got))
	}
	if _, ok, err := store.Load("missing"); ok || err != nil {
		t.Fatalf("Load of a missing key = %v, %v", ok, err)
	}
}
