package journal

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/acphost/acphost/bridge"
)

// A fork's origin round-trips through the sessions table; a session that
// is no fork reads back without one.
func TestSaveSessionKeepsForkOrigin(t *testing.T) {
	db := openAt(t, filepath.Join(t.TempDir(), "journal.db"))
	origin := &bridge.ForkOrigin{Parent: "parent-key", ParentSession: "sess_1", AfterTurn: 3, Transcript: true}
	mustSave(t, db, "child", bridge.Record{Key: "child", NativeSessionID: "sess_2", Fork: origin})
	mustSave(t, db, "parent-key", bridge.Record{Key: "parent-key", NativeSessionID: "sess_1"})
	if got := mustLoad(t, db, "child").Fork; got == nil || *got != *origin {
		t.Fatalf("the fork's origin read back as %+v, want %+v", got, origin)
	}
	if got := mustLoad(t, db, "parent-key").Fork; got != nil {
		t.Fatalf("a session that is no fork read back with origin %+v", got)
	}
	recs, err := db.Sessions(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if (r.Key == "child") != (r.Fork != nil) {
			t.Errorf("Sessions: %s has fork origin %+v", r.Key, r.Fork)
		}
	}
}

// A journal of schema version 2 (before forks) is migrated on open: its
// records keep their state and read back as no fork, and a fork can then
// be saved in it.
func TestOpenMigratesVersion2(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "journal.db")
	saved := migrations
	migrations = saved[:2]
	db, err := Open(ctx, path, nil)
	migrations = saved
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.write.ExecContext(ctx, "INSERT INTO sessions (key, cwd, session_mode) VALUES ('k1', '/w', 'plan')"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	db = openAt(t, path)
	rec := mustLoad(t, db, "k1")
	if rec.Cwd != "/w" || rec.SessionMode != "plan" || rec.Fork != nil {
		t.Fatalf("the migrated record %+v", rec)
	}
	mustSave(t, db, "k2", bridge.Record{Key: "k2", Cwd: "/w", Fork: &bridge.ForkOrigin{Parent: "k1", AfterTurn: 1}})
	if got := mustLoad(t, db, "k2").Fork; got == nil || got.Parent != "k1" || got.AfterTurn != 1 {
		t.Fatalf("a fork saved in the migrated journal read back as %+v", got)
	}
}
