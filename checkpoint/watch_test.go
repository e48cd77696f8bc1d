package checkpoint

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acphost/acphost/internal/waitfor"
)

// watchLog gathers a watch's reports for a test.
type watchLog struct {
	mu    sync.Mutex
	files map[string]string // path → the status reported, made-then-written as made
	calls [][]Change
	err   error
	seen  chan struct{} // signalled on every report
}

func newWatchLog() *watchLog {
	return &watchLog{files: map[string]string{}, seen: make(chan struct{}, 1)}
}

func (l *watchLog) report(files []Change, err error) {
	l.mu.Lock()
	if err != nil {
		l.err = err
	}
	l.calls = append(l.calls, files)
	for _, f := range files {
		if l.files[f.Path] != "A" || f.Status != "M" { // a file made, then written
			l.files[f.Path] = f.Status
		}
	}
	l.mu.Unlock()
	select {
	case l.seen <- struct{}{}:
	default:
	}
}

// waitFor waits until cond holds of the reports so far.
func (l *watchLog) waitFor(t *testing.T, what string, cond func(files map[string]string, err error) bool) {
	t.Helper()
	deadline := time.After(waitfor.Bound)
	for {
		l.mu.Lock()
		ok := cond(l.files, l.err)
		l.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-l.seen:
		case <-deadline:
			l.mu.Lock()
			defer l.mu.Unlock()
			t.Fatalf("waited %v for %s; reports: %v, error: %v", waitfor.Bound, what, l.calls, l.err)
		}
	}
}

// TestWatchLocal: created, modified and removed files are reported, in
// new directories too; what .gitignore (the workspace's, a nested
// repository's) ignores, ignored directories and .git are not.
func TestWatchLocal(t *testing.T) {
	ws := tempDir(t)
	userGit(t, ws, "init", "-q")
	write(t, filepath.Join(ws, ".gitignore"), "*.log\nbuild/\n", 0o644)
	write(t, filepath.Join(ws, "keep.txt"), "keep\n", 0o644)
	write(t, filepath.Join(ws, "gone.txt"), "bye\n", 0o644)
	write(t, filepath.Join(ws, "build/old.o"), "o", 0o644)
	nested := filepath.Join(ws, "vendor/lib")
	if err := os.MkdirAll(nested, 0o755); err != nil {
		t.Fatal(err)
	}
	userGit(t, nested, "init", "-q")
	write(t, filepath.Join(nested, ".gitignore"), "*.o\n", 0o644)
	s := open(t, ws, Options{})
	log := newWatchLog()
	stop, err := s.Watch(testCtx(t), log.report)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()

	write(t, filepath.Join(ws, "keep.txt"), "changed\n", 0o644)
	write(t, filepath.Join(ws, "made.txt"), "new\n", 0o644)
	if err := os.Remove(filepath.Join(ws, "gone.txt")); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(ws, "new/sub/deep.txt"), "deep\n", 0o644)
	write(t, filepath.Join(ws, "debug.log"), "ignored\n", 0o644)
	write(t, filepath.Join(ws, "build/out.o"), "ignored\n", 0o644)
	write(t, filepath.Join(ws, "build/fresh/x.o"), "ignored\n", 0o644)
	write(t, filepath.Join(nested, "lib.o"), "ignored\n", 0o644)
	write(t, filepath.Join(nested, "lib.c"), "int x;\n", 0o644)
	write(t, filepath.Join(ws, ".git/info/exclude"), "# touched\n", 0o644)
	write(t, filepath.Join(nested, ".git/description"), "touched\n", 0o644)
	// Events come in order: once the last write is reported, all before
	// it have been.
	write(t, filepath.Join(ws, "last.txt"), "end\n", 0o644)
	want := map[string]string{"keep.txt": "M", "made.txt": "A", "gone.txt": "D",
		"new/sub/deep.txt": "A", "vendor/lib/lib.c": "A", "last.txt": "A"}
	log.waitFor(t, "the last write's report", func(files map[string]string, _ error) bool { return files["last.txt"] != "" })
	stop()
	log.mu.Lock()
	defer log.mu.Unlock()
	for p, status := range want {
		if log.files[p] != status {
			t.Errorf("%s reported %q, want %q", p, log.files[p], status)
		}
	}
	for p := range log.files {
		if _, ok := want[p]; !ok {
			t.Errorf("%s reported (%s), but it is ignored or not a file", p, log.files[p])
		}
	}
	if log.err != nil {
		t.Errorf("the watch ended with %v", log.err)
	}
}

// TestWatchBounded: past Options.MaxWatchedDirs a watch does not start,
// or ends saying why; a negative cap turns Watch off.
func TestWatchBounded(t *testing.T) {
	ws := tempDir(t)
	for _, d := range []string{"a", "b", "c"} {
		write(t, filepath.Join(ws, d, "f.txt"), d, 0o644)
	}
	s := open(t, ws, Options{MaxWatchedDirs: 3})
	if _, err := s.Watch(testCtx(t), func([]Change, error) {}); err == nil || !strings.Contains(err.Error(), "more than 3 directories") {
		t.Fatalf("Watch of 4 directories with a cap of 3 = %v", err)
	}

	s = open(t, ws, Options{MaxWatchedDirs: 5})
	log := newWatchLog()
	stop, err := s.Watch(testCtx(t), log.report)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	write(t, filepath.Join(ws, "d/e/f.txt"), "two more directories", 0o644)
	log.waitFor(t, "the watch's end", func(_ map[string]string, err error) bool { return err != nil })
	stop()
	if !strings.Contains(log.err.Error(), "more than 5 directories (Options.MaxWatchedDirs)") {
		t.Errorf("the watch ended with %v", log.err)
	}

	s = open(t, ws, Options{MaxWatchedDirs: -1})
	if _, err := s.Watch(testCtx(t), func([]Change, error) {}); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("Watch turned off = %v, want ErrUnsupported", err)
	}
	other := open(t, ws, Options{Runner: envRunner{Local{}, "X=1"}})
	if _, err := other.Watch(testCtx(t), func([]Change, error) {}); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("Watch through a runner of the app's = %v, want ErrUnsupported", err)
	}
}

// TestWatchFlood: a flood of writes to one file names it once a report,
// created first.
func TestWatchFlood(t *testing.T) {
	ws := tempDir(t)
	s := open(t, ws, Options{})
	log := newWatchLog()
	stop, err := s.Watch(testCtx(t), log.report)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	f, err := os.Create(filepath.Join(ws, "flood.txt"))
	if err != nil {
		t.Fatal(err)
	}
	const writes = 2000
	for range writes {
		if _, err := f.WriteString("x"); err != nil {
			t.Fatal(err)
		}
	}
	f.Close()
	write(t, filepath.Join(ws, "last.txt"), "end\n", 0o644)
	log.waitFor(t, "the last write's report", func(files map[string]string, _ error) bool { return files["last.txt"] != "" })
	stop()
	log.mu.Lock()
	defer log.mu.Unlock()
	first := ""
	for _, call := range log.calls {
		n := 0
		for _, c := range call {
			if c.Path == "flood.txt" {
				n++
				if first == "" {
					first = c.Status
				}
			}
		}
		if n > 1 {
			t.Errorf("a report names flood.txt %d times: %v", n, call)
		}
	}
	if first != "A" {
		t.Errorf("flood.txt first reported as %q, want A", first)
	}
}
