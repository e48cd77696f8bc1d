package bridge_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/acptest"
	"github.com/acphost/acphost/bridge"
	"github.com/acphost/acphost/checkpoint"
	"github.com/acphost/acphost/fsroot"
)

// ExampleSession_RestoreCheckpoint restores the state before a turn and
// then undoes that restore with the From of its changes event.
func ExampleSession_RestoreCheckpoint() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "workspace")
	cache, _ := os.MkdirTemp("", "checkpoints")
	defer os.RemoveAll(dir)
	defer os.RemoveAll(cache)
	notes := filepath.Join(dir, "notes.txt")
	_ = os.WriteFile(notes, []byte("first\n"), 0o644)

	host := bridge.NewHost(nil)
	defer host.Shutdown(ctx)
	agent := &acptest.Transport{Script: acptest.Script{Prompts: []acptest.Turn{{Steps: []acptest.Step{
		{WriteFile: &acptest.WriteFile{Path: notes, Content: "first\nsecond\n"}},
	}}}}}
	b, err := host.Start(ctx, bridge.Config{ID: "demo", Transport: agent})
	if err != nil {
		log.Fatal(err)
	}
	files, _ := fsroot.NewLocal(dir, nil)
	defer files.Close()
	session, err := b.OpenSession(ctx, bridge.SessionConfig{Cwd: dir, Files: files, Policy: bridge.Policy{Mode: bridge.ModeFull},
		Checkpoints: &checkpoint.Options{Dir: filepath.Join(cache, "git")}})
	if err != nil {
		log.Fatal(err)
	}
	restores := make(chan *bridge.Changes, 1)
	go func() {
		for ev := range host.Events() {
			if ev.Kind == bridge.KindChanges && ev.Changes.Op == "restore" {
				restores <- ev.Changes
			}
		}
	}()
	if _, err := session.Prompt(ctx, acpclient.TextBlock("add a line")); err != nil {
		log.Fatal(err)
	}
	if err := session.Restore(ctx, 1, false); err != nil {
		log.Fatal(err)
	}
	restore := <-restores
	content, _ := os.ReadFile(notes)
	fmt.Printf("restored: %q\n", content)
	// The restore's From is the workspace just before it: back to it.
	if err := session.RestoreCheckpoint(ctx, restore.From, false); err != nil {
		log.Fatal(err)
	}
	content, _ = os.ReadFile(notes)
	fmt.Printf("undone: %q\n", content)
	// Output:
	// restored: "first\n"
	// undone: "first\nsecond\n"
}
