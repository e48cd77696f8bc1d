package fsroot

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// nextEvents collects events until want are all seen (in any order) or
// the deadline passes.
func expectEvents(t *testing.T, ch <-chan Event, want ...Event) {
	t.Helper()
	missing := make(map[Event]bool)
	for _, e := range want {
		missing[e] = true
	}
	timeout := time.After(10 * time.Second)
	for len(missing) > 0 {
		select {
		case e, ok := <-ch:
			if !ok {
				t.Fatalf("channel closed; still missing %v", missing)
			}
			delete(missing, e)
		case <-timeout:
			t.Fatalf("timed out; missing %v", missing)
		}
	}
}

func TestCoalescer(t *testing.T) {
	cases := []struct {
		name string
		ops  []EventOp
		want []Event
	}{
		{"created then changed", []EventOp{Created, Changed}, []Event{{Created, "/p"}}},
		{"created then removed", []EventOp{Created, Removed}, []Event{}},
		{"removed then created", []EventOp{Removed, Created}, []Event{{Changed, "/p"}}},
		{"changed then removed", []EventOp{Changed, Removed}, []Event{{Removed, "/p"}}},
		{"changed twice", []EventOp{Changed, Changed}, []Event{{Changed, "/p"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var c coalescer
			for _, op := range tc.ops {
				c.add("/p", op)
			}
			got := c.take()
			if len(got) != len(tc.want) || (len(got) == 1 && got[0] != tc.want[0]) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestLocalWatch(t *testing.T) {
	cwd := tempDir(t)
	existing := filepath.Join(cwd, "existing.txt")
	writeFile(t, existing, "v1")
	r, err := NewLocal(cwd, &Options{Debounce: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ch, err := r.Watch(ctx)
	if err != nil {
		t.Fatal(err)
	}

	created := filepath.Join(cwd, "new.txt")
	writeFile(t, created, "x")
	expectEvents(t, ch, Event{Created, created})

	if err := os.WriteFile(existing, []byte("v2"), 0o644); err != nil {
		t.Fatal(err)
	}
	expectEvents(t, ch, Event{Changed, existing})

	// Our own atomic write renames a temporary over the file: that is a
	// change to the host, and the temporary is never reported.
	if err := r.WriteTextFile(ctx, existing, "v3"); err != nil {
		t.Fatal(err)
	}
	expectEvents(t, ch, Event{Changed, existing})

	if err := os.Remove(created); err != nil {
		t.Fatal(err)
	}
	expectEvents(t, ch, Event{Removed, created})

	// A new subdirectory is watched: files made in it later are reported.
	sub := filepath.Join(cwd, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	expectEvents(t, ch, Event{Created, sub})
	inner := filepath.Join(sub, "inner.txt")
	writeFile(t, inner, "in")
	expectEvents(t, ch, Event{Created, inner})

	// Directories made in one go (mkdir -p) are all reported.
	deep := filepath.Join(cwd, "d1", "d2", "deep.txt")
	writeFile(t, deep, "deep")
	expectEvents(t, ch, Event{Created, filepath.Join(cwd, "d1")}, Event{Created, deep})

	select {
	case e := <-ch:
		if isTempName(e.Path) {
			t.Fatalf("temporary reported: %v", e)
		}
	default:
	}
}

func TestLocalWatchDebouncesBursts(t *testing.T) {
	cwd := tempDir(t)
	p := filepath.Join(cwd, "busy.txt")
	writeFile(t, p, "0")
	r, err := NewLocal(cwd, &Options{Debounce: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ch, err := r.Watch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		if err := os.WriteFile(p, []byte{byte('a' + i)}, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	marker := filepath.Join(cwd, "marker")
	writeFile(t, marker, "m")
	var got []Event
	timeout := time.After(10 * time.Second)
	for len(got) < 2 {
		select {
		case e := <-ch:
			got = append(got, e)
		case <-timeout:
			t.Fatalf("got %v", got)
		}
	}
	want := []Event{{Changed, p}, {Created, marker}}
	if got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("burst gave %v, want %v", got, want)
	}
}

func TestLocalWatchFollowsGrants(t *testing.T) {
	cwd, ext := tempDir(t), tempDir(t)
	r, err := NewLocal(cwd, &Options{Debounce: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ch, err := r.Watch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.AddGrant(ctx, ext); err != nil {
		t.Fatal(err)
	}
	// The grant is picked up asynchronously: write until it is seen.
	p := filepath.Join(ext, "g.txt")
	deadline := time.Now().Add(10 * time.Second)
	for seen := false; !seen; {
		writeFile(t, p, "g")
		select {
		case e := <-ch:
			seen = e.Path == p
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("grant never watched")
		}
	}
	r.RemoveGrant(ext)
	// After removal, events under ext stop; a cwd event proves the loop ran.
	for i := range 3 {
		writeFile(t, p, string(rune('a'+i)))
	}
	marker := filepath.Join(cwd, "m")
	deadline = time.Now().Add(10 * time.Second)
	for done := false; !done; {
		writeFile(t, marker, "m")
		select {
		case e := <-ch:
			if e.Path == p {
				// Events already gathered before the removal may still come.
				continue
			}
			done = e.Path == marker
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("cwd events stopped")
		}
	}
	writeFile(t, p, "after")
	writeFile(t, marker, "m2")
	for {
		select {
		case e := <-ch:
			if e.Path == p {
				t.Fatalf("event under a removed grant: %v", e)
			}
			if e.Path == marker {
				return
			}
		case <-time.After(10 * time.Second):
			t.Fatal("no marker event")
		}
	}
}

func TestWatchEndsWithContextAndClose(t *testing.T) {
	forEachRoot(t, func(t *testing.T, kind rootKind) {
		cwd := tempDir(t)
		r := kind.open(t, cwd, nil)
		wctx, cancel := context.WithCancel(ctx)
		ch1, err := r.Watch(wctx)
		if err != nil {
			t.Fatal(err)
		}
		ch2, err := r.Watch(ctx)
		if err != nil {
			t.Fatal(err)
		}
		cancel()
		drainClosed(t, ch1)
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		drainClosed(t, ch2)
	})
}

func drainClosed(t *testing.T, ch <-chan Event) {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case _, ok := <-ch:
			if !ok {
				return
			}
		case <-timeout:
			t.Fatal("watch channel not closed")
		}
	}
}
