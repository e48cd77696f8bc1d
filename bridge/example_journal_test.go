package bridge_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/acptest"
	"github.com/acphost/acphost/bridge"
	"github.com/acphost/acphost/journal"
)

// ExampleHost_Subscribe keeps a Host's events in a journal and reads them
// back as a browser tab that connects late would: history first, then
// live events, from any position (Last-Event-ID is a Pos).
func ExampleHost_Subscribe() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "journal-example-")
	defer os.RemoveAll(dir)
	agent := &acptest.Transport{Script: acptest.Script{
		Prompts: []acptest.Turn{{Steps: []acptest.Step{{Text: "Hello"}}}},
	}}

	db, err := journal.Open(ctx, filepath.Join(dir, "journal.db"), nil)
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	host := bridge.NewHost(&bridge.HostOptions{Journal: db})
	go func() {
		for range host.Events() { // the app's own consumer; it could answer permissions
		}
	}()
	b, err := host.Start(ctx, bridge.Config{ID: "demo", Transport: agent})
	if err != nil {
		log.Fatal(err)
	}
	session, err := b.OpenSession(ctx, bridge.SessionConfig{Cwd: "/w", Key: "chat-1"})
	if err != nil {
		log.Fatal(err)
	}
	session.Prompt(ctx, acpclient.TextBlock("Hi"))

	// A late subscriber for this session, from the beginning.
	tab, stop := context.WithCancel(ctx)
	defer stop()
	for ev, err := range host.Subscribe(tab, bridge.Cursor{Key: "chat-1"}) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(strings.TrimSpace(fmt.Sprint(ev.Seq, " ", ev.Kind, " ", ev.Text)))
		if ev.Kind == bridge.KindTurnEnd {
			stop()
		}
	}
	host.Shutdown(ctx)
	// Output:
	// 1 session
	// 2 authority
	// 3 turn_start Hi
	// 4 text Hello
	// 5 turn_end
}

// ExampleCursor_caughtUp reads a session's history from the journal and
// stops there, as a tool that prints a transcript would: CaughtUp says
// the history is done, and cancelling the context ends the subscription.
func ExampleCursor_caughtUp() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "journal-example-")
	defer os.RemoveAll(dir)
	agent := &acptest.Transport{Script: acptest.Script{
		Prompts: []acptest.Turn{{Steps: []acptest.Step{{Text: "Hello"}}}},
	}}
	db, err := journal.Open(ctx, filepath.Join(dir, "journal.db"), nil)
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	host := bridge.NewHost(&bridge.HostOptions{Journal: db})
	turnEnded := make(chan struct{})
	go func() {
		for ev := range host.Events() {
			if ev.Kind == bridge.KindTurnEnd {
				close(turnEnded)
			}
		}
	}()
	b, err := host.Start(ctx, bridge.Config{ID: "demo", Transport: agent})
	if err != nil {
		log.Fatal(err)
	}
	session, err := b.OpenSession(ctx, bridge.SessionConfig{Cwd: "/w", Key: "chat-1"})
	if err != nil {
		log.Fatal(err)
	}
	session.Prompt(ctx, acpclient.TextBlock("Hi"))
	<-turnEnded // the turn is in the history now

	history, done := context.WithCancel(ctx)
	defer done()
	cursor := bridge.Cursor{Key: "chat-1", CaughtUp: func(pos uint64) { done() }}
	for ev, err := range host.Subscribe(history, cursor) {
		if err != nil {
			log.Fatal(err)
		}
		if ev.Kind == bridge.KindText {
			fmt.Println(ev.Text)
		}
	}
	fmt.Println("end of history")
	host.Shutdown(ctx)
	// Output:
	// Hello
	// end of history
}
