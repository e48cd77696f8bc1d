package bridge

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/acptest"
	"github.com/acphost/acphost/checkpoint"
	"github.com/acphost/acphost/internal/fakeclock"
	"github.com/acphost/acphost/internal/waitfor"
)

// openCheckpointed opens a new session on b in dir, with checkpoints in a
// git directory of the test's.
func openCheckpointed(t *testing.T, b *Bridge, dir string) *Session {
	t.Helper()
	s, err := b.OpenSession(waitfor.Context(t), SessionConfig{Cwd: dir, Policy: Policy{Mode: ModeBuild},
		Checkpoints: &checkpoint.Options{Dir: filepath.Join(t.TempDir(), "checkpoints")}})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// A new session's workspace is walked while the session opens, so its
// first prompt goes out without a walk, and the checkpoint before it is
// the workspace as the prompt found it: a file changed in between is
// recorded before the turn, not counted as the turn's change.
func TestFirstCheckpointWhileTheSessionOpens(t *testing.T) {
	for _, changed := range []bool{false, true} {
		name := map[bool]string{false: "quiet", true: "changed-before-the-prompt"}[changed]
		t.Run(name, func(t *testing.T) {
			walks := countWalks(t)
			dir := t.TempDir()
			a := filepath.Join(dir, "a.txt")
			if err := os.WriteFile(a, []byte("a\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			h, rec := newHostAndRecorder(t, nil)
			b, err := h.Start(context.Background(), agentConfig(t, "prepare", acptest.Script{Prompts: []acptest.Turn{{Steps: []acptest.Step{{Text: "nothing to do"}}}}}))
			if err != nil {
				t.Fatal(err)
			}
			s := openCheckpointed(t, b, dir)
			waitfor.Until(t, "a walk of the workspace as the session opened", func() bool { return walks() == 1 })
			waitfor.Closed(t, s.ckpt.prepared, "the checkpoint as the session opened")
			want := 1
			if changed {
				if err := os.WriteFile(a, []byte("b\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				want = 2 // the checkpoint before the turn walks again
			}
			if _, err := s.Prompt(waitfor.Context(t), acpclient.TextBlock("one")); err != nil {
				t.Fatal(err)
			}
			ch := rec.waitFor("the changes of turn 1", func(ev Event) bool {
				return ev.Kind == KindChanges && ev.Changes.Op == "turn" && ev.Turn == 1
			}).Changes
			if len(ch.Files) != 0 || ch.From != ch.To {
				t.Errorf("a turn that changed nothing: changes %+v from %s to %s", ch.Files, ch.From, ch.To)
			}
			if n := walks(); n != want {
				t.Errorf("the workspace was walked %d times, want %d", n, want)
			}
		})
	}
}

// A session closed while its first checkpoint is being recorded gives it
// up and leaves nothing running (the package's goleak check).
func TestCloseWhileTheFirstCheckpointIsRecorded(t *testing.T) {
	dir := t.TempDir()
	h, _ := newHostAndRecorder(t, nil)
	b, err := h.Start(context.Background(), agentConfig(t, "prepare-close", acptest.Script{}))
	if err != nil {
		t.Fatal(err)
	}
	s := openCheckpointed(t, b, dir)
	if s.ckpt.prepared == nil {
		t.Fatal("no checkpoint was started as the session opened")
	}
	if err := s.Close(waitfor.Context(t)); err != nil {
		t.Fatal(err)
	}
	waitfor.Closed(t, s.ckpt.prepared, "the given-up checkpoint")
	s.ckpt.mu.Lock()
	defer s.ckpt.mu.Unlock()
	if s.ckpt.stopWatch != nil || s.ckpt.idle != nil {
		t.Errorf("the closed session keeps its watch (%v) or its idle timer (%v)", s.ckpt.stopWatch != nil, s.ckpt.idle != nil)
	}
}

// The watch a session starts as it opens stops after watchIdle when no
// turn comes, as one does after a session's last turn.
func TestPreparedWatchStopsWhenIdle(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	clock := fakeClock{fakeclock.New()}
	s, _ := liveSession(t, dir, "true", checkpoint.Options{}, clock)
	waitfor.Closed(t, s.ckpt.prepared, "the checkpoint as the session opened")
	watching := func() bool {
		s.ckpt.mu.Lock()
		defer s.ckpt.mu.Unlock()
		return s.ckpt.stopWatch != nil
	}
	if !watching() {
		t.Fatal("no watch runs once the session's first checkpoint is recorded")
	}
	clock.Advance(watchIdle - time.Second)
	if !watching() {
		t.Fatal("the watch stopped before the session was idle for watchIdle")
	}
	clock.Advance(time.Second)
	waitfor.Until(t, "the idle session's watch to stop", func() bool { return !watching() })
}

// A prompt cancelled while the session's first checkpoint is still being
// recorded gives that checkpoint up, as it gives up its own walk: a git
// that hangs (a dead SSH link) does not hold the prompt.
func TestPromptCancelledWhileTheFirstCheckpointIsRecorded(t *testing.T) {
	log := wrapGitStatus(t, "exec sleep 600")
	h, _ := newHostAndRecorder(t, nil)
	b, err := h.Start(context.Background(), agentConfig(t, "prepare-hang", acptest.Script{Prompts: []acptest.Turn{{Steps: []acptest.Step{{Text: "ok"}}}}}))
	if err != nil {
		t.Fatal(err)
	}
	s := openCheckpointed(t, b, t.TempDir())
	waitfor.Until(t, "the walk as the session opened", func() bool { b, _ := os.ReadFile(log); return len(b) > 0 })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = s.Prompt(ctx, acpclient.TextBlock("one"))
	}()
	waitfor.Until(t, "the turn to start", func() bool { return s.curTurn.Load() == 1 })
	cancel()
	waitfor.Closed(t, done, "the cancelled prompt to return")
}
