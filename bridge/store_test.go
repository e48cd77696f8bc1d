package bridge

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestFileStoreRoundTrip(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state", "sessions.json")
	s := NewFileStore(path)
	if _, ok, err := s.Load("k"); ok || err != nil {
		t.Fatalf("empty store: %v %v", ok, err)
	}
	rec := Record{NativeSessionID: "sess_1", Provider: "crewcoder", Model: "m", Mode: "build", ApprovalPolicy: "review",
		ExternalDirectories: []string{"/a", "/b"}}
	if err := s.Save("k", rec); err != nil {
		t.Fatal(err)
	}
	got, ok, err := NewFileStore(path).Load("k")
	if err != nil || !ok {
		t.Fatalf("load: %v %v", ok, err)
	}
	rec.UpdatedAt = got.UpdatedAt
	if !reflect.DeepEqual(got, rec) || got.UpdatedAt.IsZero() {
		t.Fatalf("got %+v, want %+v", got, rec)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("temporary files left behind: %v", entries)
	}
	if err := s.Delete("k"); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := s.Load("k"); ok {
		t.Error("deleted record still there")
	}
}

func TestFileStoreReportsCorruption(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.json")
	os.WriteFile(path, []byte("{not json"), 0o600)
	s := NewFileStore(path)
	if _, _, err := s.Load("k"); err == nil || !strings.Contains(err.Error(), "corrupt") {
		t.Fatalf("corrupt store: %v", err)
	}
	// A failed save must not overwrite what is there.
	if err := s.Save("k", Record{NativeSessionID: "x"}); err == nil {
		t.Fatal("saved over a corrupt store")
	}
	if b, _ := os.ReadFile(path); string(b) != "{not json" {
		t.Errorf("store rewritten: %q", b)
	}
}

func TestSessionStateIsSaved(t *testing.T) {
	store := NewFileStore(filepath.Join(t.TempDir(), "s.json"))
	h, _ := newHostAndRecorder(t, nil)
	b, err := h.Start(t.Context(), agentConfig(t, "st", turnScript))
	if err != nil {
		t.Fatal(err)
	}
	s, err := b.OpenSession(t.Context(), SessionConfig{Cwd: "/w", Store: store, Key: "chat-1",
		ExternalDirectories: []string{"/x"}, Policy: Policy{Mode: ModeAsk}})
	if err != nil {
		t.Fatal(err)
	}
	s.SetPolicy(Policy{Mode: ModeFull})
	rec, ok, err := store.Load("chat-1")
	if err != nil || !ok || rec.NativeSessionID != "sess_A" || rec.Mode != "full" || rec.Cwd != "/w" || rec.ExternalDirectories[0] != "/x" {
		t.Fatalf("stored %+v %v %v", rec, ok, err)
	}
}
