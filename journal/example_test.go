package journal_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/acphost/acphost/bridge"
	"github.com/acphost/acphost/journal"
)

func ExampleOpen() {
	dir, err := os.MkdirTemp("", "journal-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	db, err := journal.Open(ctx, filepath.Join(dir, "journal.db"), nil)
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()

	// A Host with HostOptions.Journal numbers and appends its events
	// itself; here two are appended by hand.
	now := time.Now()
	err = db.Append(ctx, []bridge.Event{
		{Pos: 1, Bridge: "claude", Key: "s1", Session: "native-1", Seq: 1, Turn: 1, Kind: bridge.KindTurnStart, Time: now, Text: "hello"},
		{Pos: 2, Bridge: "claude", Key: "s1", Session: "native-1", Seq: 2, Turn: 1, Kind: bridge.KindText, Time: now, Text: "Hi! How can I help?"},
	})
	if err != nil {
		log.Fatal(err)
	}

	events, err := db.ReadEvents(ctx, bridge.EventQuery{Key: "s1"})
	if err != nil {
		log.Fatal(err)
	}
	for _, ev := range events {
		fmt.Printf("%d %s #%d %s: %s\n", ev.Pos, ev.Key, ev.Seq, ev.Kind, ev.Text)
	}
	last, _ := db.LastSeq(ctx, "s1")
	fmt.Println("last seq of s1:", last)
	// Output:
	// 1 s1 #1 turn_start: hello
	// 2 s1 #2 text: Hi! How can I help?
	// last seq of s1: 2
}
