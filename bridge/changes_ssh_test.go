package bridge

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/acptest"
	"github.com/acphost/acphost/bridge/terminal"
	"github.com/acphost/acphost/checkpoint"
	"github.com/acphost/acphost/internal/sshdtest"
	"github.com/acphost/acphost/internal/waitfor"
)

// TestCheckpointsOnTheSSHHost: for an agent launched over SSH the
// checkpoints are taken there, in the login's cache directory, and see
// what a command of the agent changed on that host.
func TestCheckpointsOnTheSSHHost(t *testing.T) {
	srv := sshdtest.Start(t)
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	script := acptest.WriteScript(t, acptest.Script{Prompts: []acptest.Turn{{Steps: []acptest.Step{
		{Terminal: &acptest.Terminal{Command: "sh", Args: []string{"-c", "printf 'remote\\n' > remote.txt"}, Cwd: dir}},
	}}}})
	tr := &acpclient.SSHTransport{Client: srv.Dial(t), Path: acptest.BuildBinary(t), Args: []string{"-script", script}}
	h, rec := newHostAndRecorder(t, nil)
	b, err := h.Start(context.Background(), Config{ID: "remote", Transport: tr, Terminals: &terminal.Options{}})
	if err != nil {
		t.Fatal(err)
	}
	s, err := b.OpenSession(waitfor.Context(t), SessionConfig{Cwd: dir, Policy: Policy{Mode: ModeBuild}, Checkpoints: &checkpoint.Options{}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Prompt(waitfor.Context(t), acpclient.TextBlock("run")); err != nil {
		t.Fatal(err)
	}
	ev := rec.waitFor("the turn's changes", func(ev Event) bool { return ev.Kind == KindChanges && ev.Changes.Op == "turn" })
	if ev.Changes.Op != "turn" || len(ev.Changes.Files) != 1 || ev.Changes.Files[0].Path != "remote.txt" || ev.Changes.Files[0].Status != "A" {
		t.Fatalf("changes = %+v", ev.Changes)
	}
	dirs, _ := os.ReadDir(filepath.Join(srv.Home, ".cache", "acphost", "checkpoints"))
	if len(dirs) != 1 {
		t.Errorf("checkpoint directories in the login's cache: %v", dirs)
	}
	if diff, err := s.TurnDiff(waitfor.Context(t), 1); err != nil || !strings.Contains(diff, "+remote") {
		t.Errorf("TurnDiff = %q, %v", diff, err)
	}
}
