package checkpoint_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/acphost/acphost/checkpoint"
)

// A checkpoint before and after a change, what changed, and the restore
// that brings the workspace back.
func Example() {
	ctx := context.Background()
	ws, _ := os.MkdirTemp("", "workspace")
	dir, _ := os.MkdirTemp("", "checkpoints")
	defer os.RemoveAll(ws)
	defer os.RemoveAll(dir)
	_ = os.WriteFile(filepath.Join(ws, "main.go"), []byte("package main\n"), 0o644)

	store, err := checkpoint.Open(ctx, checkpoint.Options{Workspace: ws, Dir: filepath.Join(dir, "git")})
	if err != nil {
		log.Fatal(err)
	}
	before, err := store.Snapshot(ctx, "turn-1-before")
	if err != nil {
		log.Fatal(err)
	}
	_ = os.WriteFile(filepath.Join(ws, "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o644)
	_ = os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("todo\n"), 0o644)
	if _, err := store.Snapshot(ctx, "turn-1-end"); err != nil {
		log.Fatal(err)
	}

	changes, err := store.Changes(ctx, "turn-1-before", "turn-1-end")
	if err != nil {
		log.Fatal(err)
	}
	for _, c := range changes {
		fmt.Printf("%s %s +%d -%d\n", c.Status, c.Path, c.Added, c.Removed)
	}
	if _, err := store.Restore(ctx, before.ID, false); err != nil {
		log.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(ws, "main.go"))
	_, err = os.Stat(filepath.Join(ws, "notes.txt"))
	fmt.Printf("%q, notes.txt gone: %v\n", b, os.IsNotExist(err))
	// Output:
	// M main.go +2 -0
	// A notes.txt +1 -0
	// "package main\n", notes.txt gone: true
}
