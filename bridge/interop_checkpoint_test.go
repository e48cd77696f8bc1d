//go:build interop

package bridge

// Checkpoints of what real agents change with their own tools: claude-
// agent-acp's Write and a codex-acp shell command, driven by the fake
// model (the agents of .ci/acceptance-agents.sh, as the steering tests
// use them). The bridge sees neither write as an fs/* call of its own
// necessarily; the checkpoints around the turn must list the file anyway,
// and restoring the turn must take it away again.

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/checkpoint"
	"github.com/acphost/acphost/internal/peertest"
)

func TestInteropClaudeAgentACPWriteIsCheckpointed(t *testing.T) {
	testInteropCheckpointed(t, claudeSteerPeer)
}

func TestInteropCodexACPCommandIsCheckpointed(t *testing.T) {
	testInteropCheckpointed(t, codexSteerPeer)
}

func testInteropCheckpointed(t *testing.T, peer steerPeer) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	b, rec, cwd := startSteerPeer(t, peer, nil)
	// The workspace is a repository of the user's, whose state must not
	// move.
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.name=u", "-c", "user.email=u@x", "commit", "-qm", "start", "--allow-empty"}} {
		if out, err := exec.Command("git", append([]string{"-C", cwd}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	userState := func() string {
		out, err := exec.Command("git", "-C", cwd, "status", "--porcelain", "--untracked-files=all").CombinedOutput()
		if err != nil {
			t.Fatalf("git status: %v\n%s", err, out)
		}
		head, _ := exec.Command("git", "-C", cwd, "rev-parse", "HEAD").Output()
		return string(out) + string(head)
	}
	before := userState()

	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	s, err := b.OpenSession(ctx, SessionConfig{Cwd: cwd, Files: peertest.DiskFiles{}, Policy: Policy{Mode: ModeBuild},
		Checkpoints: &checkpoint.Options{Dir: filepath.Join(t.TempDir(), "checkpoints")}})
	if err != nil {
		t.Fatalf("OpenSession: %v; events %s", err, rec.summary())
	}
	rec.setPermissionAnswer(func(p *PermissionRequest) { p.Allow() })
	if stop, err := s.Prompt(ctx, acpclient.TextBlock(peer.askingPrompt(cwd))); err != nil || stop != acpclient.StopEndTurn {
		t.Fatalf("the writing turn: %q, %v; events %s", stop, err, rec.summary())
	}
	hello := filepath.Join(cwd, "hello.txt")
	if b, err := os.ReadFile(hello); err != nil || string(b) != "hello\n" {
		t.Fatalf("the agent's tool did not write hello.txt: %q, %v; events %s", b, err, rec.summary())
	}
	changes := rec.waitFor("the turn's changes event", func(ev Event) bool {
		return ev.Kind == KindChanges && ev.Session == s.ID() && ev.Changes.Op == "turn" && ev.Turn == 1
	})
	if len(changes.Changes.Files) != 1 || changes.Changes.Files[0].Path != "hello.txt" || changes.Changes.Files[0].Status != "A" {
		t.Fatalf("the turn's changes: %+v, want hello.txt added and nothing else", changes.Changes.Files)
	}
	diff, err := s.TurnDiff(ctx, 1)
	if err != nil || !strings.Contains(diff, "+hello") {
		t.Fatalf("TurnDiff: %v\n%s", err, diff)
	}
	if err := s.Restore(ctx, 1, false); err != nil {
		t.Fatalf("Restore to before the turn: %v", err)
	}
	if _, err := os.Stat(hello); !os.IsNotExist(err) {
		t.Fatalf("hello.txt after the restore: %v, want it gone", err)
	}
	if after := userState(); after != before {
		t.Errorf("the user's repository moved:\nbefore %q\nafter  %q", before, after)
	}
}
