package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acphost/acphost/bridge"
)

// A turn's changes, its diff, a restore refused over the user's edit and
// then forced, all as separate acprun processes sharing the journal.
func TestChangesAndRestore(t *testing.T) {
	t.Parallel()
	home, cwd := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(cwd, "keep.txt"), []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	first := runAcprunIn(t, home, "--approve", "allow", "--cwd", cwd, "Write the note")
	if first.code != exitOK {
		t.Fatalf("turn: exit %d; stderr:\n%s", first.code, first.stderr)
	}
	m := resumeHintPattern.FindStringSubmatch(first.stderr)
	if m == nil {
		t.Fatalf("no resume hint on stderr:\n%s", first.stderr)
	}
	key := m[1]
	note := filepath.Join(cwd, "acprun-demo.txt")

	if r := runAcprunIn(t, home, "changes", key); r.code != exitOK || r.stdout != "turn 1\nA acprun-demo.txt\n" {
		t.Errorf("changes: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	r := runAcprunIn(t, home, "changes", "--turn", "1", "--diff", key)
	if r.code != exitOK || !strings.HasPrefix(r.stdout, "A acprun-demo.txt\n") || !strings.Contains(r.stdout, "\n+Hello from the demo agent.\n") {
		t.Errorf("changes --diff: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	events := parseEvents(t, runAcprunIn(t, home, "changes", "--events", key).stdout)
	if len(events) != 1 || events[0].Kind != bridge.KindChanges || events[0].Turn != 1 || len(events[0].Changes.Files) != 1 {
		t.Errorf("changes --events = %+v", events)
	}
	if r := runAcprunIn(t, home, "changes", "--turn", "2", key); r.code != exitFailed || !strings.Contains(r.stderr, "no changes recorded") {
		t.Errorf("changes --turn 2: exit %d, stderr %q", r.code, r.stderr)
	}

	if err := os.WriteFile(note, []byte("edited by the user\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := runAcprunIn(t, home, "restore", "--turn", "1", key); r.code != exitFailed || !strings.Contains(r.stderr, "acprun-demo.txt") || !strings.Contains(r.stderr, "force") {
		t.Errorf("restore over the user's edit: exit %d, stderr %q", r.code, r.stderr)
	}
	if b, _ := os.ReadFile(note); string(b) != "edited by the user\n" {
		t.Errorf("the refused restore changed the note: %q", b)
	}
	if r := runAcprunIn(t, home, "restore", "--turn", "1", "--force", key); r.code != exitOK || r.stdout != "D acprun-demo.txt\n" {
		t.Errorf("restore --force: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(note); !os.IsNotExist(err) {
		t.Errorf("the note is still there after the restore: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(cwd, "keep.txt")); string(b) != "mine\n" {
		t.Errorf("keep.txt = %q", b)
	}
	hist := parseEvents(t, runAcprunIn(t, home, "history", "--events", key).stdout)
	last := hist[len(hist)-1]
	if last.Kind != bridge.KindChanges || last.Changes.Op != "restore" || last.Changes.Restored != 1 || last.Seq != hist[len(hist)-2].Seq+1 {
		t.Errorf("the journal's last event is %+v, want the restore", last)
	}
}

func TestRestoreNeedsATurn(t *testing.T) {
	t.Parallel()
	if r := runAcprun(t, "restore", "somekey"); r.code != exitUsage || !strings.Contains(r.stderr, "--turn N") {
		t.Errorf("restore without --turn: exit %d, stderr %q", r.code, r.stderr)
	}
}

// Without git on the PATH the demo still runs as the README promises:
// its turns are simply not recorded, and nothing reports a failing
// checkpoint.
func TestNoGitNoCheckpoints(t *testing.T) {
	t.Parallel()
	home, cwd := t.TempDir(), t.TempDir()
	r := runAcprunEnv(t, home, []string{"PATH=" + t.TempDir()}, "--events", "--approve", "allow", "--cwd", cwd, "Add a note")
	if r.code != exitOK {
		t.Fatalf("exit status %d, want 0; stderr:\n%s", r.code, r.stderr)
	}
	for _, ev := range parseEvents(t, r.stdout) {
		if ev.Kind == bridge.KindError || ev.Kind == bridge.KindChanges && ev.Changes.Op == "turn" {
			t.Errorf("without git: %s event %+v", ev.Kind, ev)
		}
	}
}
