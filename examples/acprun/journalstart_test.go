package main

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/acphost/acphost/bridge"
	"github.com/acphost/acphost/journal"
)

// A journal opened aside is handed out before its open ends; its calls
// wait for the open and then reach the journal.
func TestJournalOpensAside(t *testing.T) {
	release := make(chan struct{})
	path := filepath.Join(t.TempDir(), "j.db")
	aside := make(chan *openingJournal, 1)
	go func() {
		aside <- openAside(func() (*journal.DB, error) {
			<-release
			return journal.Open(context.Background(), path, nil)
		})
	}()
	var j *openingJournal
	select {
	case j = <-aside:
	case <-time.After(10 * time.Second):
		close(release)
		t.Fatal("openAside waited for the open to end")
	}
	appended := make(chan error, 1)
	go func() {
		// Called while the open waits: it must wait too, not find no DB.
		appended <- j.Append(context.Background(), []bridge.Event{{Pos: 1, Seq: 1, Key: "k", Kind: bridge.KindTurnStart, Turn: 1, Text: "hi"}})
	}()
	close(release)
	select {
	case err := <-appended:
		if err != nil {
			t.Fatalf("Append once open: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Append did not return once the journal was open")
	}
	if last, err := j.LastSeq(context.Background(), "k"); err != nil || last != 1 {
		t.Errorf("LastSeq = %d, %v; want the appended event's 1", last, err)
	}
	if err := j.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
}

// A journal that failed to open fails every call with the open's error,
// and has nothing to close.
func TestJournalOpenedAsideFails(t *testing.T) {
	refused := errors.New("refused")
	j := openAside(func() (*journal.DB, error) { return nil, refused })
	if err := j.opened(); !errors.Is(err, refused) {
		t.Errorf("opened() = %v, want %v", err, refused)
	}
	if _, err := j.Sessions(context.Background()); !errors.Is(err, refused) {
		t.Errorf("Sessions = %v, want %v", err, refused)
	}
	if err := j.Close(); err != nil {
		t.Errorf("Close of a journal that did not open: %v", err)
	}
}
