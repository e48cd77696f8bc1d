package journal

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/acphost/acphost/bridge"
)

// One writer at a time: a second Open for writing fails with ErrInUse
// (two Hosts numbering events into one file would collide and lose one's
// history), while read-only opens work beside the writer, see its commits
// and refuse writes. Closing the writer frees the file.
func TestOneWriterAtATime(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "j.db")
	w, err := Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if second, err := Open(ctx, path, nil); !errors.Is(err, ErrInUse) {
		if second != nil {
			second.Close()
		}
		t.Fatalf("second writer: %v, want ErrInUse", err)
	}
	r, err := Open(ctx, path, &Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("read-only beside the writer: %v", err)
	}
	defer r.Close()
	mustAppend(t, w, textEvent(1, "k1", 1))
	if got, err := r.ReadEvents(ctx, bridge.EventQuery{}); err != nil || len(got) != 1 {
		t.Fatalf("the reader sees %v, %v", got, err)
	}
	if err := r.Append(ctx, []bridge.Event{textEvent(2, "k1", 2)}); !errors.Is(err, ErrReadOnly) {
		t.Errorf("Append on a read-only journal: %v, want ErrReadOnly", err)
	}
	if err := r.SaveSession(ctx, "k1", bridge.Record{Key: "k1"}); !errors.Is(err, ErrReadOnly) {
		t.Errorf("SaveSession on a read-only journal: %v, want ErrReadOnly", err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	again, err := Open(ctx, path, nil)
	if err != nil {
		t.Fatalf("writer after the first closed: %v", err)
	}
	again.Close()
}

// A read-only open of a file that does not exist fails and creates
// nothing.
func TestReadOnlyNeedsTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "none", "j.db")
	if db, err := Open(context.Background(), path, &Options{ReadOnly: true}); err == nil {
		db.Close()
		t.Fatal("opened a journal that does not exist")
	}
	if _, err := os.Stat(filepath.Dir(path)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a read-only open created %s (%v)", filepath.Dir(path), err)
	}
}
