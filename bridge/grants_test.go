package bridge

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/acptest"
	"github.com/acphost/acphost/fsroot"
)

// promptReport runs one prompt and returns the fake agent's report that
// starts with prefix.
func promptReport(t *testing.T, s *Session, rec *recorder, text, prefix string) string {
	t.Helper()
	if _, err := s.Prompt(ctxT(t), acpclient.TextBlock(text)); err != nil {
		t.Fatal(err)
	}
	var found string
	// The end of this turn, not of an earlier one of the session.
	started := false
	rec.waitFor(text+" turn end", func(ev Event) bool {
		if ev.Session != s.ID() {
			return false
		}
		started = started || (ev.Kind == KindTurnStart && ev.Text == text)
		return started && ev.Kind == KindTurnEnd
	})
	for _, ev := range rec.of(s.Bridge().ID(), s.ID()) {
		if ev.Kind == KindText && strings.HasPrefix(ev.Text, prefix) {
			found = ev.Text // the latest such report
		}
	}
	return found
}

// TestPolicyDrivesTheRootsWriteGate: the session's policy is the one write
// rule, and a root's own gate follows it: opening the session sets it
// (overriding how the root was made), every SetPolicy flips it, and the
// agent's write is refused by the root with the policy's reason.
func TestPolicyDrivesTheRootsWriteGate(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "out.txt")
	root, err := fsroot.NewLocal(dir, &fsroot.Options{ReadOnly: true, ReadOnlyReason: "made read-only"})
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	script := acptest.Script{Prompts: []acptest.Turn{{Steps: []acptest.Step{{WriteFile: &acptest.WriteFile{Path: target, Content: "agent"}}}}}}
	h, rec := newHostAndRecorder(t, nil)
	b, err := h.Start(ctxT(t), agentConfig(t, "gate", script))
	if err != nil {
		t.Fatal(err)
	}
	s, err := b.OpenSession(ctxT(t), SessionConfig{Cwd: dir, Files: root, Policy: Policy{Mode: ModeBuild}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t)
	if err := root.WriteTextFile(ctx, target, "app"); err != nil {
		t.Fatalf("Build session left the root read-only: %v", err)
	}
	for _, tt := range []struct {
		policy Policy
		want   string
	}{
		{Policy{Mode: ModeAsk}, "(Ask mode)"},
		{Policy{Mode: ModePlan}, "(Plan mode)"},
		{Policy{Mode: ModeFull, ReadOnly: true}, "(read-only tool policy)"},
	} {
		s.SetPolicy(tt.policy)
		err := root.WriteTextFile(ctx, target, "app")
		if !errors.Is(err, fsroot.ErrReadOnly) || !strings.Contains(err.Error(), tt.want) {
			t.Fatalf("policy %+v: root write %v, want ErrReadOnly %s", tt.policy, err, tt.want)
		}
	}
	s.SetPolicy(Policy{Mode: ModeAsk})
	if got := promptReport(t, s, rec, "ask", "write "); !strings.Contains(got, "error -32603") || !strings.Contains(got, "Ask mode") || !strings.Contains(got, "read-only") {
		t.Fatalf("agent's write in Ask mode answered %q", got)
	}
	if got, _ := os.ReadFile(target); string(got) != "app" {
		t.Fatalf("refused write changed the file: %q", got)
	}
	s.SetPolicy(Policy{Mode: ModeBuild})
	if got := promptReport(t, s, rec, "build", "write "); got != "write "+target+": ok" {
		t.Fatalf("agent's write in Build mode answered %q", got)
	}
	if got, _ := os.ReadFile(target); string(got) != "agent" {
		t.Fatalf("file = %q after the agent's write", got)
	}
}

// grantRecorder is a Provider hook that records every grant list sent.
type grantRecorder struct {
	mu    sync.Mutex
	lists [][]string
}

func (g *grantRecorder) set(_ context.Context, _ *acpclient.Conn, _ string, dirs []string) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.lists = append(g.lists, append([]string{}, dirs...))
	return nil
}

func (g *grantRecorder) sent() [][]string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([][]string(nil), g.lists...)
}

// TestSetGrantsLive: the session's grant list is the one list. Changed live,
// the root serves the new directory and refuses the removed one at once,
// and an agent with a vendor method is told the complete new list; a list
// the root refuses changes nothing anywhere.
func TestSetGrantsLive(t *testing.T) {
	cwd, oldDir, newDir := t.TempDir(), t.TempDir(), t.TempDir()
	oldDir, _ = filepath.EvalSymlinks(oldDir)
	newDir, _ = filepath.EvalSymlinks(newDir)
	root, err := fsroot.NewLocal(cwd, &fsroot.Options{Grants: []string{newDir}}) // replaced by the session's list
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	script := acptest.Script{Prompts: []acptest.Turn{{Steps: []acptest.Step{
		{WriteFile: &acptest.WriteFile{Path: filepath.Join(newDir, "new.txt"), Content: "new"}},
		{WriteFile: &acptest.WriteFile{Path: filepath.Join(oldDir, "old.txt"), Content: "old"}},
	}}}}
	hook := &grantRecorder{}
	h, rec := newHostAndRecorder(t, nil)
	cfg := agentConfig(t, "grants", script)
	cfg.Provider = &Provider{Name: "granting", SetExternalDirectories: hook.set}
	b, err := h.Start(ctxT(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	s, err := b.OpenSession(ctxT(t), SessionConfig{Cwd: cwd, Files: root, ExternalDirectories: []string{oldDir}})
	if err != nil {
		t.Fatal(err)
	}
	if got := root.Grants(); !reflect.DeepEqual(got, []string{oldDir}) {
		t.Fatalf("root grants after open %q, want the session's %q", got, oldDir)
	}
	if err := s.SetGrants(ctxT(t), []string{newDir}); err != nil {
		t.Fatal(err)
	}
	if err := s.SetGrants(ctxT(t), []string{newDir, filepath.Join(cwd, "missing")}); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("granting a missing directory: %v", err)
	}
	if got, want := hook.sent(), [][]string{{oldDir}, {newDir}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("agent told %q, want %q", got, want)
	}
	if got := s.Grants(); !reflect.DeepEqual(got, []string{newDir}) {
		t.Fatalf("session grants %q", got)
	}
	if _, err := s.Prompt(ctxT(t), acpclient.TextBlock("go")); err != nil {
		t.Fatal(err)
	}
	rec.waitFor("turn end", func(ev Event) bool { return ev.Kind == KindTurnEnd })
	var reports []string
	for _, ev := range rec.of("grants", s.ID()) {
		if ev.Kind == KindText {
			reports = append(reports, ev.Text)
		}
	}
	if len(reports) != 2 || !strings.HasSuffix(reports[0], ": ok") || !strings.Contains(reports[1], "outside") {
		t.Fatalf("agent's writes answered %q", reports)
	}
	if got, _ := os.ReadFile(filepath.Join(newDir, "new.txt")); string(got) != "new" {
		t.Errorf("write in the new grant: %q", got)
	}
	if _, err := os.Stat(filepath.Join(oldDir, "old.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("write in the removed grant landed: %v", err)
	}
}

// TestSetGrantsHookFailureMakesTheSessionUnusable: an agent that could not
// be told the new list would keep stale grants for its own tools.
func TestSetGrantsHookFailureMakesTheSessionUnusable(t *testing.T) {
	fail := false
	h, _ := newHostAndRecorder(t, nil)
	cfg := agentConfig(t, "stale", acptest.Script{})
	cfg.Provider = &Provider{SetExternalDirectories: func(context.Context, *acpclient.Conn, string, []string) error {
		if fail {
			return errors.New("vendor method failed")
		}
		return nil
	}}
	b, err := h.Start(ctxT(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	s, err := b.OpenSession(ctxT(t), SessionConfig{Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	fail = true
	if err := s.SetGrants(ctxT(t), []string{"/x"}); !errors.Is(err, ErrUnusable) {
		t.Fatalf("SetGrants: %v", err)
	}
	if _, err := s.Prompt(ctxT(t), acpclient.TextBlock("hi")); !errors.Is(err, ErrUnusable) {
		t.Fatalf("Prompt after a failed grant sync: %v", err)
	}
}
