package bridge

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/acptest"
	"github.com/acphost/acphost/checkpoint"
)

// The first prompt's workspace and agent: real agents answer session/new
// in a tenth of a second (codex-acp) to two (claude-agent-acp).
const (
	firstPromptFiles      = 1000
	firstPromptSessionNew = 200 * time.Millisecond
)

// BenchmarkFirstPrompt is a new session's first prompt in a workspace of
// firstPromptFiles files, on an agent whose session/new takes
// firstPromptSessionNew: the time from Prompt to the turn_start event,
// which the Host emits once the checkpoint before the turn is recorded
// and the prompt is on its way. "watched-ms" is a session with its watch,
// the default, whose workspace was walked while it opened; "unwatched-ms"
// one without (checkpoint.Options.MaxWatchedDirs < 0), whose checkpoint
// walks the workspace at the prompt, as every first checkpoint did before
// sessions walked as they opened. "x-unwatched" is the median of the
// rounds' ratios, watched over unwatched; the two alternate, so that
// both see the same machine.
func BenchmarkFirstPrompt(b *testing.B) {
	if _, err := os.Stat("/usr/bin/git"); err != nil {
		b.Skip("git is not installed")
	}
	dir := b.TempDir()
	for i := range firstPromptFiles {
		p := filepath.Join(dir, fmt.Sprintf("d%02d", i%50), fmt.Sprintf("f%04d.txt", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(p+"\n"), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	bin := acptest.BuildBinary(b)
	script := acptest.WriteScript(b, acptest.Script{
		NewSession: acptest.NewSessionScript{Steps: []acptest.Step{{Sleep: acptest.Duration(firstPromptSessionNew)}}},
		Prompts:    []acptest.Turn{{Steps: []acptest.Step{{Text: "ok"}}}},
	})
	firstPrompt(b, bin, script, dir, 0) // warm git, the binary and the workspace into the page cache
	var watched, unwatched, ratios []float64
	for b.Loop() {
		w, u := firstPrompt(b, bin, script, dir, 0), firstPrompt(b, bin, script, dir, -1)
		if len(ratios)%2 == 1 {
			u, w = firstPrompt(b, bin, script, dir, -1), firstPrompt(b, bin, script, dir, 0)
		}
		watched, unwatched = append(watched, w.Seconds()*1e3), append(unwatched, u.Seconds()*1e3)
		ratios = append(ratios, w.Seconds()/u.Seconds())
	}
	median := func(v []float64) float64 { slices.Sort(v); return v[len(v)/2] }
	b.ReportMetric(median(watched), "watched-ms")
	b.ReportMetric(median(unwatched), "unwatched-ms")
	b.ReportMetric(median(ratios), "x-unwatched")
}

// firstPrompt starts the agent on a Host of its own, opens a session in
// dir with checkpoints (maxWatchedDirs their option) and times its first
// prompt from Prompt to turn_start.
func firstPrompt(b *testing.B, bin, script, dir string, maxWatchedDirs int) time.Duration {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	h := NewHost(nil)
	started := make(chan time.Time, 1)
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		for ev := range h.Events() {
			if ev.Kind == KindTurnStart {
				started <- time.Now()
			}
		}
	}()
	defer func() {
		if err := h.Shutdown(ctx); err != nil {
			b.Error(err)
		}
		<-drained
	}()
	br, err := h.Start(ctx, Config{Transport: &acpclient.CommandTransport{Path: bin, Args: []string{"-script", script}}})
	if err != nil {
		b.Fatal(err)
	}
	s, err := br.OpenSession(ctx, SessionConfig{Cwd: dir, Policy: Policy{Mode: ModeBuild},
		Checkpoints: &checkpoint.Options{Dir: filepath.Join(b.TempDir(), "checkpoints"), MaxWatchedDirs: maxWatchedDirs}})
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	if _, err := s.Prompt(ctx, acpclient.TextBlock("one")); err != nil {
		b.Fatal(err)
	}
	select {
	case t := <-started:
		return t.Sub(start)
	case <-ctx.Done():
		b.Fatal("no turn_start within a minute")
		return 0
	}
}
