package checkpoint

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/acphost/acphost/internal/sshdtest"
)

// benchTree writes a committed repository of n small files in
// directories of 100.
func benchTree(b *testing.B, n int) string {
	b.Helper()
	ws, err := filepath.EvalSymlinks(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	for i := range n {
		p := filepath.Join(ws, fmt.Sprintf("pkg%03d", i/100), fmt.Sprintf("file%03d.go", i%100))
		if i%100 == 0 {
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				b.Fatal(err)
			}
		}
		if err := os.WriteFile(p, []byte("package p\n\nconst n = "+strconv.Itoa(i)+"\n"), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "."}, {"commit", "-qm", "tree"}} {
		benchGit(b, ws, args...)
	}
	return ws
}

func benchGit(b *testing.B, dir string, args ...string) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=u", "GIT_AUTHOR_EMAIL=u@x", "GIT_COMMITTER_NAME=u", "GIT_COMMITTER_EMAIL=u@x"}
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// BenchmarkTurnOverhead measures what checkpoints add to a turn on a tree
// of 20,000 files of which a turn changes five: a Snapshot and the
// Changes since the previous one, against "git status --porcelain" on
// the same tree in the same iteration (ratio: the first over the second;
// two-snapshots-ratio also counts the snapshot taken before the next
// turn, with nothing changed in between, as when the user waits for the
// agent). A watch runs all along, as a bridge's does; live-report-after-ms
// is how long after the checkpoint its report of the turn's files came
// (it lets a walk go first), timed apart from both.
func BenchmarkTurnOverhead(b *testing.B) {
	b.Run("local", func(b *testing.B) { benchTurn(b, Local{}, Local{}) })
	b.Run("sshd", func(b *testing.B) {
		srv := sshdtest.Start(b)
		client := srv.Dial(b)
		// The checkpoints' commands run through a Shell, as a bridge's do;
		// git status runs over the same connection in a session of its
		// own, as it would for a user.
		shell := &Shell{}
		defer shell.Close()
		benchTurn(b, SSH{Dial: func(context.Context) (*ssh.Client, error) { return client, nil }, Shell: shell}, SSH{Dial: func(context.Context) (*ssh.Client, error) { return client, nil }})
	})
}

// benchTurn measures a Store with runner r against git status run with
// status.
func benchTurn(b *testing.B, r, status Runner) {
	ws := benchTree(b, 20_000)
	ctx := context.Background()
	s, err := Open(ctx, Options{Workspace: ws, Dir: filepath.Join(b.TempDir(), "cp"), Runner: r})
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	prev, err := s.Snapshot(ctx, "first")
	if err != nil {
		b.Fatal(err)
	}
	first := time.Since(start)
	// The watch runs all along, as a bridge's does for a session: the
	// snapshot before a turn then finds nothing changed without a walk.
	reported := make(chan []Change, 64)
	stop, err := s.Watch(ctx, func(files []Change, err error) {
		if err != nil {
			b.Error(err)
		}
		reported <- files
	})
	if err != nil {
		b.Fatal(err)
	}
	defer stop()
	statusCmd := []string{"sh", "-c", `cd "$1" && exec git status --porcelain`, "sh", ws}
	statusEnv := []string{"HOME=" + ws, "GIT_CONFIG_NOSYSTEM=1"}
	var ours, theirs, before, live time.Duration
	b.ResetTimer()
	for i := range b.N {
		written := map[string]bool{}
		for k := range 5 {
			rel := fmt.Sprintf("pkg%03d/file%03d.go", (i*5+k)%200, k)
			written[rel] = true
			p := filepath.Join(ws, rel)
			if err := os.WriteFile(p, []byte("package p\n// turn "+strconv.Itoa(i)+"\n"), 0o644); err != nil {
				b.Fatal(err)
			}
		}
		t0 := time.Now()
		cp, err := s.Snapshot(ctx, "turn-"+strconv.Itoa(i))
		if err != nil {
			b.Fatal(err)
		}
		changes, err := s.Changes(ctx, prev.ID, cp.ID)
		if err != nil || len(changes) == 0 {
			b.Fatalf("changes %v, %v", changes, err)
		}
		tEnd := time.Now()
		// The watch reports the turn's files after the walk (it lets
		// the walk go first): wait for that report, so that it runs
		// beside neither git status nor the next snapshot.
		awaitReports(b, reported, written)
		t1 := time.Now()
		if _, err := status.Run(ctx, statusCmd, statusEnv, nil); err != nil {
			b.Fatal(err)
		}
		t2 := time.Now()
		if _, err := s.Snapshot(ctx, "turn-"+strconv.Itoa(i)+"-before"); err != nil {
			b.Fatal(err)
		}
		t3 := time.Now()
		ours += tEnd.Sub(t0)
		live += t1.Sub(tEnd)
		theirs += t2.Sub(t1)
		before += t3.Sub(t2)
		prev = cp
	}
	b.ReportMetric(float64(first.Milliseconds()), "first-snapshot-ms")
	b.ReportMetric(float64(ours.Microseconds())/float64(b.N)/1000, "turn-ms")
	b.ReportMetric(float64(theirs.Microseconds())/float64(b.N)/1000, "status-ms")
	b.ReportMetric(float64(live.Microseconds())/float64(b.N)/1000, "live-report-after-ms")
	b.ReportMetric(float64(ours)/float64(theirs), "ratio")
	b.ReportMetric(float64(ours+before)/float64(theirs), "two-snapshots-ratio")
}

// awaitReports waits until the watch has reported every path of want.
func awaitReports(b *testing.B, reported <-chan []Change, want map[string]bool) {
	deadline := time.After(time.Minute)
	for len(want) > 0 {
		select {
		case files := <-reported:
			for _, f := range files {
				delete(want, f.Path)
			}
		case <-deadline:
			b.Fatalf("waited a minute for the watch to report %v", want)
		}
	}
}
