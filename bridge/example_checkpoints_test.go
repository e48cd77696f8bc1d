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
	"github.com/acphost/acphost/checkpoint"
	"github.com/acphost/acphost/fsroot"
)

// ExampleSession_Restore records the workspace around a turn, shows what
// the turn changed and its diff, and brings the workspace back to its
// state before the turn.
func ExampleSession_Restore() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "workspace")
	cache, _ := os.MkdirTemp("", "checkpoints")
	defer os.RemoveAll(dir)
	defer os.RemoveAll(cache)
	_ = os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("first\n"), 0o644)

	host := bridge.NewHost(nil)
	defer host.Shutdown(ctx)
	agent := &acptest.Transport{Script: acptest.Script{Prompts: []acptest.Turn{{Steps: []acptest.Step{
		{WriteFile: &acptest.WriteFile{Path: filepath.Join(dir, "notes.txt"), Content: "first\nsecond\n"}},
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
	turns := make(chan bridge.Event, 1)
	go func() {
		for ev := range host.Events() {
			if ev.Kind == bridge.KindChanges && ev.Changes.Op == "turn" {
				turns <- ev
			}
		}
	}()
	if _, err := session.Prompt(ctx, acpclient.TextBlock("add a line")); err != nil {
		log.Fatal(err)
	}
	ev := <-turns
	for _, f := range ev.Changes.Files {
		fmt.Printf("turn %d: %s %s +%d -%d\n", ev.Turn, f.Status, f.Path, f.Added, f.Removed)
	}
	diff, err := session.TurnDiff(ctx, 1, "notes.txt")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(diff[strings.Index(diff, "@@"):]) // after the header lines
	if err := session.Restore(ctx, 1, false); err != nil {
		log.Fatal(err)
	}
	content, _ := os.ReadFile(filepath.Join(dir, "notes.txt"))
	fmt.Printf("after the restore: %q\n", content)
	// Output:
	// turn 1: M notes.txt +1 -0
	// @@ -1 +1,2 @@
	//  first
	// +second
	// after the restore: "first\n"
}
