package bridge

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/acptest"
	"github.com/acphost/acphost/bridge/terminal"
	"github.com/acphost/acphost/checkpoint"
	"github.com/acphost/acphost/internal/fakeclock"
	"github.com/acphost/acphost/internal/waitfor"
)

// liveSession opens a session with checkpoints on dir (a git repository
// with a.txt and gone.txt) whose one turn runs command, then waits for
// cancel.
func liveSession(t *testing.T, dir string, command string, opt checkpoint.Options, clock Clock) (*Session, *recorder) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	gitIn(t, dir, "init", "-q")
	for name, content := range map[string]string{"a.txt": "old\n", "gone.txt": "bye\n", ".gitignore": "*.log\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	script := acptest.Script{Prompts: []acptest.Turn{{Steps: []acptest.Step{
		{Terminal: &acptest.Terminal{Command: "sh", Args: []string{"-c", command}, Cwd: dir}},
		{WaitCancel: true},
	}}}}
	h, rec := newHostAndRecorder(t, nil)
	cfg := agentConfig(t, "live", script)
	cfg.Terminals = &terminal.Options{}
	cfg.Clock = clock
	b, err := h.Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if opt.Dir == "" {
		opt.Dir = filepath.Join(t.TempDir(), "checkpoints")
	}
	s, err := b.OpenSession(waitfor.Context(t), SessionConfig{Cwd: dir, Policy: Policy{Mode: ModeBuild}, Checkpoints: &opt})
	if err != nil {
		t.Fatal(err)
	}
	return s, rec
}

// runLive runs the session's turn in the background; cancel ends it.
func runLive(t *testing.T, s *Session) func() {
	ctx, cancel := context.WithCancel(waitfor.Context(t))
	done := make(chan error, 1)
	go func() {
		_, err := s.Prompt(ctx, acpclient.TextBlock("go"))
		done <- err
	}()
	return func() {
		cancel()
		waitfor.Recv(t, done, "the cancelled turn's end")
	}
}

// touched is every file the touch events so far name, with its latest
// status, and the events' Skipped reasons.
func touched(rec *recorder) (map[string]string, []string) {
	files := map[string]string{}
	var why []string
	for _, ev := range rec.snapshot() {
		if ev.Kind == KindChanges && ev.Changes.Op == "touch" {
			for _, f := range ev.Changes.Files {
				files[f.Path] = f.Status
			}
			for _, sk := range ev.Changes.Skipped {
				why = append(why, sk.Reason)
			}
		}
	}
	return files, why
}

// TestLiveTouches: while a turn runs, the files a command of the agent
// touches are reported (ignored ones not), before the turn ends; every
// touch event comes before the turn's changes event.
func TestLiveTouches(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s, rec := liveSession(t, dir, "printf 'new\\n' > a.txt && rm gone.txt && mkdir -p sub && printf 'x\\n' > sub/made.txt && printf 'log\\n' > debug.log", checkpoint.Options{}, nil)
	cancel := runLive(t, s)
	want := map[string]string{"a.txt": "M", "gone.txt": "D", "sub/made.txt": "A"}
	waitfor.Until(t, "touch events naming the command's files while the turn runs", func() bool {
		got, _ := touched(rec)
		return reflect.DeepEqual(got, want)
	})
	for _, ev := range rec.snapshot() {
		if ev.Kind == KindTurnEnd {
			t.Fatal("the turn ended before the test cancelled it")
		}
	}
	cancel()
	end := rec.waitFor("the turn's changes", func(ev Event) bool { return ev.Kind == KindChanges && ev.Changes.Op == "turn" })
	sawEnd := false
	for _, ev := range rec.snapshot() {
		if ev.Kind != KindChanges {
			continue
		}
		if ev.Seq == end.Seq {
			sawEnd = true
		} else if ev.Changes.Op == "touch" && (sawEnd || ev.Turn != 1) {
			t.Errorf("touch event %+v after the turn's changes, or of turn %d", ev.Changes, ev.Turn)
		}
	}
	if len(end.Changes.Files) != 3 {
		t.Errorf("the turn's changes = %+v", end.Changes.Files)
	}
}

// TestLiveOff: a negative MaxWatchedDirs turns live reports off; the
// turn's event still lists the files.
func TestLiveOff(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s, rec := liveSession(t, dir, "printf 'new\\n' > a.txt", checkpoint.Options{MaxWatchedDirs: -1}, nil)
	cancel := runLive(t, s)
	rec.waitFor("the command's end", func(ev Event) bool {
		return ev.Kind == KindText && strings.HasPrefix(ev.Text, "terminal: exit")
	})
	cancel()
	end := rec.waitFor("the turn's changes", func(ev Event) bool { return ev.Kind == KindChanges && ev.Changes.Op == "turn" })
	if files, why := touched(rec); len(files) != 0 || len(why) != 0 {
		t.Errorf("touch events with live reports off: %v %v", files, why)
	}
	if len(end.Changes.Files) != 1 || end.Changes.Files[0].Path != "a.txt" {
		t.Errorf("the turn's changes = %+v", end.Changes.Files)
	}
}

// TestLiveBounded: a workspace with more directories than the cap says
// that live reports stopped; the turn's event lists everything.
func TestLiveBounded(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"x/y", "z"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	s, rec := liveSession(t, dir, "printf 'new\\n' > a.txt", checkpoint.Options{MaxWatchedDirs: 2}, nil)
	cancel := runLive(t, s)
	waitfor.Until(t, "a touch event saying live reports stopped", func() bool {
		_, why := touched(rec)
		return len(why) == 1 && strings.Contains(why[0], "more than 2 directories")
	})
	cancel()
	end := rec.waitFor("the turn's changes", func(ev Event) bool { return ev.Kind == KindChanges && ev.Changes.Op == "turn" })
	if len(end.Changes.Files) != 1 {
		t.Errorf("the turn's changes = %+v", end.Changes.Files)
	}
}

// TestLiveDebounce: on the Bridge's clock, what the watch reports within
// an interval is one event, a file once, made-then-written as made,
// made-then-removed not at all, past the cap counted.
func TestLiveDebounce(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	clock := fakeClock{fakeclock.New()}
	s, rec := liveSession(t, dir, "true", checkpoint.Options{}, clock)
	l := &liveChanges{s: s, turn: 9, pending: map[string]string{}}
	for range 500 {
		l.touched([]checkpoint.Change{{Status: "M", Path: "flood.txt"}}, nil)
	}
	l.touched([]checkpoint.Change{{Status: "A", Path: "new.txt"}, {Status: "A", Path: "tmp.txt"}, {Status: "D", Path: "swap.txt"}}, nil)
	l.touched([]checkpoint.Change{{Status: "M", Path: "new.txt"}, {Status: "D", Path: "tmp.txt"}, {Status: "A", Path: "swap.txt"}}, nil)
	for i := range maxLiveFiles {
		l.touched([]checkpoint.Change{{Status: "A", Path: "many/" + string(rune('a'+i%26)) + strings.Repeat("x", i/26)}}, nil)
	}
	if files, _ := touched(rec); len(files) != 0 {
		t.Fatalf("reported before the interval passed: %v", files)
	}
	clock.Advance(liveInterval)
	ev := rec.waitFor("the interval's touch event", func(ev Event) bool { return ev.Kind == KindChanges && ev.Changes.Op == "touch" })
	got := map[string]string{}
	for _, f := range ev.Changes.Files {
		if !strings.HasPrefix(f.Path, "many/") {
			got[f.Path] = f.Status
		}
	}
	if want := map[string]string{"flood.txt": "M", "new.txt": "A", "swap.txt": "M"}; !reflect.DeepEqual(got, want) || ev.Turn != 9 {
		t.Errorf("touch event of turn %d: %v, want %v", ev.Turn, got, want)
	}
	if len(ev.Changes.Files) != maxLiveFiles || len(ev.Changes.Skipped) != 1 || !strings.HasPrefix(ev.Changes.Skipped[0].Reason, "3 more files") {
		t.Errorf("an interval past the cap: %d files, skipped %+v", len(ev.Changes.Files), ev.Changes.Skipped)
	}
	l.touched([]checkpoint.Change{{Status: "M", Path: "flood.txt"}}, nil)
	clock.Advance(liveInterval)
	rec.waitFor("the next interval's event", func(e Event) bool {
		return e.Kind == KindChanges && e.Changes.Op == "touch" && e.Seq > ev.Seq && len(e.Changes.Files) == 1
	})
}

// TestWatchStopsWhenIdle: the session's watch runs on after its turn,
// for the next turn's checkpoint, and stops once the session has been
// idle for watchIdle on the Bridge's clock; the next turn starts it again.
func TestWatchStopsWhenIdle(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	clock := fakeClock{fakeclock.New()}
	s, rec := liveSession(t, dir, "true", checkpoint.Options{}, clock)
	watching := func() bool {
		s.ckpt.mu.Lock()
		defer s.ckpt.mu.Unlock()
		return s.ckpt.stopWatch != nil
	}
	recorded := func() bool { // the checkpoint before the turn; its watch runs by then
		s.ckpt.mu.Lock()
		defer s.ckpt.mu.Unlock()
		return len(s.ckpt.before) > 0
	}
	cancel := runLive(t, s)
	waitfor.Until(t, "the checkpoint before the turn", recorded)
	if !watching() {
		t.Fatal("no watch runs once the turn's checkpoint is recorded")
	}
	cancel()
	rec.waitFor("the turn's changes", func(ev Event) bool { return ev.Kind == KindChanges && ev.Changes.Op == "turn" })
	if !watching() {
		t.Fatal("the watch stopped with the turn")
	}
	clock.Advance(watchIdle - time.Second)
	if !watching() {
		t.Fatal("the watch stopped before the session was idle for watchIdle")
	}
	clock.Advance(time.Second)
	waitfor.Until(t, "the idle session's watch to stop", func() bool { return !watching() })
	cancel = runLive(t, s)
	waitfor.Until(t, "the checkpoint before the next turn", recorded)
	if !watching() {
		t.Fatal("the next turn did not start the watch again")
	}
	cancel()
}
