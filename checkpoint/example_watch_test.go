package checkpoint_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/acphost/acphost/checkpoint"
)

// Following a workspace while an agent works in it: each report lists the
// files touched since the last one; ignored files are left out.
func ExampleStore_Watch() {
	ctx := context.Background()
	ws, _ := os.MkdirTemp("", "workspace")
	dir, _ := os.MkdirTemp("", "checkpoints")
	defer os.RemoveAll(ws)
	defer os.RemoveAll(dir)
	_ = os.WriteFile(filepath.Join(ws, ".gitignore"), []byte("*.log\n"), 0o644)

	store, err := checkpoint.Open(ctx, checkpoint.Options{Workspace: ws, Dir: filepath.Join(dir, "git")})
	if err != nil {
		log.Fatal(err)
	}
	touched := make(chan checkpoint.Change, 16)
	stop, err := store.Watch(ctx, func(files []checkpoint.Change, err error) {
		if err != nil {
			log.Print(err) // the watch ended early; the checkpoints still list everything
		}
		for _, f := range files {
			touched <- f
		}
	})
	if err != nil {
		log.Fatal(err) // no watcher here: no live reports
	}
	defer stop()

	_ = os.WriteFile(filepath.Join(ws, "build.log"), []byte("ignored\n"), 0o644)
	_ = os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("todo\n"), 0o644)
	f := <-touched
	fmt.Println(f.Status, f.Path)
	// Output:
	// A notes.txt
}
