//go:build interop

package bridge

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/internal/peertest"
)

// claude-agent-acp advertises session/fork (unstable) and forks at the
// end of a session only: after a turn against the fake model, the fork
// opens under a new key and native id, runs a turn of its own, and a
// rewind to before the turn is refused as unsupported without a call.
func TestInteropClaudeAgentACPFork(t *testing.T) {
	argv := peertest.Peers(t)["ACP_PEER_CLAUDE_AGENT_ACP_ZED"]
	if argv == nil {
		t.Fatal("peers.env has no ACP_PEER_CLAUDE_AGENT_ACP_ZED")
	}
	t.Parallel()
	port := peertest.MockModel(t)
	j := newLifeJournal()
	h, rec := newHostAndRecorder(t, &HostOptions{Journal: j})
	cwd := t.TempDir()
	env := peertest.Env(t, fmt.Sprintf("ANTHROPIC_BASE_URL=http://127.0.0.1:%d", port), "ANTHROPIC_API_KEY=x", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1")
	b := startPeer(t, h, peerProfile("claude"), argv, env, cwd, Config{ID: "claude-fork"})
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	s, err := b.OpenSession(ctx, SessionConfig{Key: "parent", Cwd: cwd, Files: peertest.DiskFiles{}, Policy: Policy{Mode: ModeBuild}})
	if err != nil {
		t.Fatal(err)
	}
	if stop, err := s.Prompt(ctx, acpclient.TextBlock("hi")); err != nil || stop != acpclient.StopEndTurn {
		t.Fatalf("parent's turn: %q, %v; events %s", stop, err, rec.summary())
	}
	if err := s.CanFork(0); err != nil {
		t.Fatalf("CanFork(0): %v", err)
	}
	if err := s.CanFork(1); !errors.Is(err, acpclient.ErrUnsupported) {
		t.Errorf("CanFork(1), a rewind: %v, want ErrUnsupported", err)
	}
	child, err := s.Fork(ctx, ForkOptions{Key: "child"})
	if err != nil {
		t.Fatalf("Fork: %v; events %s", err, rec.summary())
	}
	if child.ID() == "" || child.ID() == s.ID() {
		t.Fatalf("fork's native id %q, parent's %q", child.ID(), s.ID())
	}
	if stop, err := child.Prompt(ctx, acpclient.TextBlock("hi")); err != nil || stop != acpclient.StopEndTurn {
		t.Fatalf("fork's turn: %q, %v; events %s", stop, err, rec.summary())
	}
	rec.waitFor("the fork's turn end", func(ev Event) bool { return ev.Kind == KindTurnEnd && ev.Key == "child" })
	var parentTexts, ownTexts int
	for ev, err := range History(ctx, j, "child") {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Kind == KindText && ev.Key == "parent" {
			parentTexts++
		}
		if ev.Kind == KindText && ev.Key == "child" {
			ownTexts++
		}
	}
	if parentTexts == 0 || ownTexts == 0 {
		t.Errorf("the fork's history has %d text events of the parent and %d of its own; events %s", parentTexts, ownTexts, rec.summary())
	}
}
