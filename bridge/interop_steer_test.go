//go:build interop

package bridge

// Steering and native fork against real agents that advertise them: the
// releases of claude-agent-acp and codex-acp that .ci/acceptance-agents.sh
// installs into $ACPHOST_ACCEPTANCE_DIR (the versions pinned in
// shared/peers advertise no steering, and that codex-acp no session/fork).
// Both run offline against the fake model of shared/peers; without the
// directory or the agent the test is skipped.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/internal/peertest"
)

// steerPeer is an agent of the acceptance directory that steers.
type steerPeer struct {
	// name is its directory there and its program in node_modules/.bin.
	name string
	// launch returns its environment for the fake model on port, and
	// prepares cwd (project settings) where the agent needs it.
	launch func(t *testing.T, port int, cwd string) []string
	// askingPrompt has the fake model call a tool that the agent, as
	// launched, asks permission for: the turn then waits for the app.
	askingPrompt func(cwd string) string
}

var claudeSteerPeer = steerPeer{
	name: "claude-agent-acp",
	launch: func(t *testing.T, port int, cwd string) []string {
		// Its default mode decides permissions by itself; "default" asks.
		writeTestFile(t, filepath.Join(cwd, ".claude", "settings.json"), `{"permissions":{"defaultMode":"default"}}`)
		return peertest.Env(t, fmt.Sprintf("ANTHROPIC_BASE_URL=http://127.0.0.1:%d", port), "ANTHROPIC_API_KEY=x", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1")
	},
	askingPrompt: func(cwd string) string {
		return `MOCK_TOOL:Write:{"file_path":"` + filepath.Join(cwd, "hello.txt") + `","content":"hello\n"}`
	},
}

var codexSteerPeer = steerPeer{
	name: "codex-acp",
	launch: func(t *testing.T, port int, _ string) []string {
		// Its default mode has a model review each command; read-only asks.
		env := peertest.Env(t, "OPENAI_API_KEY=x", "INITIAL_AGENT_MODE=read-only")
		writeTestFile(t, filepath.Join(envValue(t, env, "HOME"), ".codex", "config.toml"), fmt.Sprintf(`model_provider = "mock"
model = "mock-model"
[model_providers.mock]
name = "mock"
base_url = "http://127.0.0.1:%d/v1"
wire_api = "responses"
env_key = "OPENAI_API_KEY"
`, port))
		return env
	},
	askingPrompt: func(string) string {
		return `MOCK_TOOL:exec_command:{"cmd":"echo hello > hello.txt","sandbox_permissions":"require_escalated","justification":"test"}`
	},
}

// acceptancePeer returns the launch command of an agent installed by
// .ci/acceptance-agents.sh, or skips the test.
func acceptancePeer(t *testing.T, name string) []string {
	t.Helper()
	dir := os.Getenv("ACPHOST_ACCEPTANCE_DIR")
	if dir == "" {
		t.Skip("ACPHOST_ACCEPTANCE_DIR is not set (.ci/acceptance-agents.sh installs " + name + " there)")
	}
	path := filepath.Join(dir, name, "node_modules", ".bin", name)
	if _, err := os.Stat(path); err != nil {
		t.Skipf("%s is not installed (.ci/acceptance-agents.sh DIR %s): %v", name, name, err)
	}
	return []string{path}
}

// startSteerPeer starts the agent against a fresh fake model.
func startSteerPeer(t *testing.T, peer steerPeer, opts *HostOptions) (*Bridge, *recorder, string) {
	t.Helper()
	argv := acceptancePeer(t, peer.name)
	peertest.Peers(t) // the fake model lives beside the pinned peers
	port := peertest.MockModel(t)
	h, rec := newHostAndRecorder(t, opts)
	cwd := t.TempDir()
	return startPeer(t, h, peerProfile(peer.name), argv, peer.launch(t, port, cwd), cwd, Config{ID: peer.name}), rec, cwd
}

func TestInteropClaudeAgentACPSteer(t *testing.T) { testInteropSteer(t, claudeSteerPeer) }

func TestInteropCodexACPSteer(t *testing.T) { testInteropSteer(t, codexSteerPeer) }

// testInteropSteer: the session says it steers through _session/steering;
// text steered while the turn waits on a permission is taken and shows in
// that turn; once the turn has ended, the agent's own answer is read as
// "no turn", Steer without a fallback fails with ErrNoTurn, and with
// SteerQueue the text runs as the next turn.
func testInteropSteer(t *testing.T, peer steerPeer) {
	t.Parallel()
	b, rec, cwd := startSteerPeer(t, peer, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	s, err := b.OpenSession(ctx, SessionConfig{Cwd: cwd, Files: peertest.DiskFiles{}, Policy: Policy{Mode: ModeBuild}})
	if err != nil {
		t.Fatalf("OpenSession: %v; events %s", err, rec.summary())
	}
	if via := s.SteerMode(); via != SteerExtension {
		t.Fatalf("SteerMode: %q, want %q (the agent advertises _meta.steering.supported)", via, SteerExtension)
	}

	type result struct {
		stop string
		err  error
	}
	done := make(chan result, 1)
	go func() {
		stop, err := s.Prompt(ctx, acpclient.TextBlock(peer.askingPrompt(cwd)))
		done <- result{stop, err}
	}()
	perm := rec.waitFor("the turn's permission request", func(ev Event) bool {
		return ev.Kind == KindPermission && ev.Session == s.ID() && ev.Permission != nil
	})
	const steerText = "Also say goodbye."
	if via, err := s.Steer(ctx, steerText, ""); err != nil || via != SteerExtension {
		t.Fatalf("Steer into the running turn: %q, %v; events %s", via, err, rec.summary())
	}
	steered := rec.waitFor("the steered user_text", func(ev Event) bool {
		return ev.Kind == KindUserText && ev.Session == s.ID() && ev.Steer != ""
	})
	if steered.Steer != SteerExtension || steered.Text != steerText || steered.Turn != perm.Turn || perm.Turn == 0 {
		t.Errorf("steered event: steer %q, text %q, turn %d; want %q, %q, the permission's turn %d", steered.Steer, steered.Text, steered.Turn, SteerExtension, steerText, perm.Turn)
	}
	if err := perm.Permission.Allow(); err != nil {
		t.Fatalf("Allow: %v", err)
	}
	select {
	case r := <-done:
		if r.err != nil || r.stop != acpclient.StopEndTurn {
			t.Fatalf("the steered turn: %q, %v; events %s", r.stop, r.err, rec.summary())
		}
	case <-ctx.Done():
		t.Fatalf("waiting for the steered turn to end: %v; events %s", ctx.Err(), rec.summary())
	}
	end := rec.waitFor("the steered turn's end", func(ev Event) bool {
		return ev.Kind == KindTurnEnd && ev.Session == s.ID() && ev.Turn == perm.Turn
	})
	if steered.Seq >= end.Seq {
		t.Errorf("the steered text (#%d) is after its turn's end (#%d)", steered.Seq, end.Seq)
	}

	// A turn that ends just before the agent takes the text: the agent
	// answers for itself, and that answer must read as "no turn".
	var taken atomic.Bool
	err = s.turns.steerNative(ctx, b.liveConn(), SteerExtension, "too late", func() { taken.Store(true) })
	if !errors.Is(err, ErrNoTurn) || taken.Load() {
		t.Errorf("_session/steering after the turn: %v (taken %v), want ErrNoTurn", err, taken.Load())
	}
	if via, err := s.Steer(ctx, "too late", ""); !errors.Is(err, ErrNoTurn) {
		t.Errorf("Steer after the turn without a fallback: %q, %v; want ErrNoTurn", via, err)
	}
	if via, err := s.Steer(ctx, "hi", SteerQueue); err != nil || via != SteerQueue {
		t.Fatalf("Steer after the turn, queue fallback: %q, %v", via, err)
	}
	next := rec.waitFor("the queued text's turn end", func(ev Event) bool {
		return ev.Kind == KindTurnEnd && ev.Session == s.ID() && ev.Turn == perm.Turn+1
	})
	if next.StopReason != acpclient.StopEndTurn || next.Err != nil {
		t.Errorf("the queued text's turn: %q, %v; events %s", next.StopReason, next.Err, rec.summary())
	}
	for _, ev := range rec.of(b.ID(), s.ID()) {
		if ev.Kind == KindTurnStart && ev.Turn == perm.Turn+1 && !strings.Contains(ev.Text, "hi") {
			t.Errorf("the queued turn started with %q, not the steered text", ev.Text)
		}
	}
}

// codex-acp forks through session/fork: the fork opens under a new key and
// native id, records its parent, runs a turn of its own, and its history
// reads as the parent's turn, then its own.
func TestInteropCodexACPFork(t *testing.T) {
	t.Parallel()
	j := newLifeJournal()
	b, rec, cwd := startSteerPeer(t, codexSteerPeer, &HostOptions{Journal: j})
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	s, err := b.OpenSession(ctx, SessionConfig{Key: "parent", Cwd: cwd, Files: peertest.DiskFiles{}, Policy: Policy{Mode: ModeBuild}})
	if err != nil {
		t.Fatalf("OpenSession: %v; events %s", err, rec.summary())
	}
	if stop, err := s.Prompt(ctx, acpclient.TextBlock("hi")); err != nil || stop != acpclient.StopEndTurn {
		t.Fatalf("parent's turn: %q, %v; events %s", stop, err, rec.summary())
	}
	if err := s.CanFork(0); err != nil {
		t.Fatalf("CanFork(0): %v", err)
	}
	child, err := s.Fork(ctx, ForkOptions{Key: "child"})
	if err != nil {
		t.Fatalf("Fork: %v; events %s", err, rec.summary())
	}
	if child.ID() == "" || child.ID() == s.ID() {
		t.Fatalf("fork's native id %q, parent's %q", child.ID(), s.ID())
	}
	ready := rec.waitFor("the fork's session event", func(ev Event) bool {
		return ev.Kind == KindSession && ev.Key == "child" && ev.SessionReady != nil
	})
	if o := ready.SessionReady.Fork; o == nil || o.Parent != "parent" || o.ParentSession != s.ID() || o.AfterTurn != 1 || o.Transcript {
		t.Errorf("the fork's origin: %+v, want parent %q (%s) after turn 1, native", o, "parent", s.ID())
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

// envValue is the value of name in env.
func envValue(t *testing.T, env []string, name string) string {
	t.Helper()
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, name+"="); ok {
			return v
		}
	}
	t.Fatalf("no %s in %v", name, env)
	return ""
}

func writeTestFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
