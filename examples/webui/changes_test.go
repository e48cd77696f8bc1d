package main

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/acphost/acphost/acptest"
	"github.com/acphost/acphost/bridge"
	"github.com/acphost/acphost/checkpoint"
)

// gitIn runs git in the user's repository dir, with a config of the
// test's own.
func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=u", "GIT_AUTHOR_EMAIL=u@x", "GIT_COMMITTER_NAME=u", "GIT_COMMITTER_EMAIL=u@x"}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// changesScript is an agent whose "change" turn writes a.txt through
// fs/write_text_file and, by a command of its own in a terminal, deletes
// gone.txt and makes made.txt; its "hold" turn waits for a cancel.
func changesScript(dir string) acptest.Script {
	return acptest.Script{QuietReports: true, Prompts: []acptest.Turn{
		{Match: "change", Steps: []acptest.Step{
			{WriteFile: &acptest.WriteFile{Path: filepath.Join(dir, "a.txt"), Content: "new\nlines\n"}},
			{Terminal: &acptest.Terminal{Command: "sh", Args: []string{"-c", "rm gone.txt && printf 'made\\n' > made.txt"}, Cwd: dir}},
			{Text: "Changed three files"},
		}},
		{Match: "hold", Steps: []acptest.Step{{Text: "Holding"}, {WaitCancel: true}}},
		{Steps: []acptest.Step{{Text: "Answered"}}},
	}}
}

// startChangesServer starts a server with checkpoints on, in a fresh git
// repository holding a.txt, gone.txt and keep.txt, with an agent of
// changesScript; the checkpoints go to a cache directory of the test's.
// It skips the test where git is not installed.
func startChangesServer(t *testing.T) *testServer {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	dir := t.TempDir()
	cwd, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	cwd = filepath.Join(cwd, "ws")
	if err := os.Mkdir(cwd, 0o755); err != nil {
		t.Fatal(err)
	}
	gitIn(t, cwd, "init", "-q")
	for name, content := range map[string]string{"a.txt": "old\n", "gone.txt": "bye\n", "keep.txt": "keep\n"} {
		writeFile(t, filepath.Join(cwd, name), content)
	}
	gitIn(t, cwd, "add", ".")
	gitIn(t, cwd, "commit", "-qm", "base")
	return startServerConfig(t, filepath.Join(dir, "journal.db"), serverConfig{
		Agents: []agentSpec{fakeAgent(t, "changer", changesScript(cwd))}, Workspace: &workspace{cwd: cwd},
		Terminals: true, Checkpoints: true})
}

func writeFile(t *testing.T, name, content string) {
	t.Helper()
	if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// fileText returns a file's text, or "(none)" where it does not exist.
func fileText(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(name)
	if os.IsNotExist(err) {
		return "(none)"
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func isChanges(op string) func(bridge.Event) bool {
	return func(ev bridge.Event) bool { return ev.Kind == bridge.KindChanges && ev.Changes.Op == op }
}

// TestChangesAPI: a turn's changes event lists its files; the diff
// endpoint answers its diff, whole or of one file; revert sets one file
// back; a restore over a file the user changed since is refused with the
// file named, until forced; a restore while a turn runs is refused.
func TestChangesAPI(t *testing.T) {
	ts := startChangesServer(t)
	key := ts.newSession(t, "changer")
	base := "/api/sessions/" + key
	live := ts.stream(t, "?key="+key, nil)
	ts.call(t, "POST", base+"/prompt", map[string]string{"text": "change"}, http.StatusAccepted, nil)
	ev := live.until(t, isChanges("turn"))
	want := []checkpoint.Change{
		{Status: "M", Path: "a.txt", Added: 2, Removed: 1},
		{Status: "D", Path: "gone.txt", Removed: 1},
		{Status: "A", Path: "made.txt", Added: 1},
	}
	if ev.Turn != 1 || !reflect.DeepEqual(ev.Changes.Files, want) {
		t.Fatalf("turn %d changed %+v\nwant turn 1: %+v", ev.Turn, ev.Changes.Files, want)
	}

	var d struct{ Diff string }
	ts.call(t, "GET", base+"/diff?turn=1", nil, http.StatusOK, &d)
	for _, part := range []string{"\n-old\n+new\n+lines\n", "\n-bye\n", "\n+made\n"} {
		if !strings.Contains(d.Diff, part) {
			t.Errorf("diff of turn 1 lacks %q:\n%s", part, d.Diff)
		}
	}
	d.Diff = ""
	ts.call(t, "GET", base+"/diff?turn=1&path=a.txt", nil, http.StatusOK, &d)
	if !strings.Contains(d.Diff, "+new\n") || strings.Contains(d.Diff, "made.txt") {
		t.Errorf("diff of a.txt in turn 1:\n%s", d.Diff)
	}
	ts.call(t, "GET", base+"/diff?turn=x", nil, http.StatusBadRequest, nil)
	ts.call(t, "GET", base+"/diff", nil, http.StatusBadRequest, nil)

	ts.call(t, "POST", base+"/restore", map[string]any{}, http.StatusBadRequest, nil)
	ts.call(t, "POST", base+"/revert", map[string]any{"turn": 1}, http.StatusBadRequest, nil)
	ts.call(t, "POST", base+"/restore", map[string]any{"turn": 1, "path": "a.txt"}, http.StatusBadRequest, nil)

	// Revert one file: made.txt, new in the turn, goes; the rest stays.
	ts.call(t, "POST", base+"/revert", map[string]any{"turn": 1, "path": "made.txt"}, http.StatusOK, nil)
	if got := fileText(t, filepath.Join(ts.cwd, "made.txt")); got != "(none)" {
		t.Errorf("made.txt after its revert: %q", got)
	}
	if got := fileText(t, filepath.Join(ts.cwd, "a.txt")); got != "new\nlines\n" {
		t.Errorf("a.txt after the revert of another file: %q", got)
	}
	if ev := live.until(t, isChanges("restore")); ev.Changes.Restored != 1 || len(ev.Changes.Files) != 1 || ev.Changes.Files[0].Path != "made.txt" {
		t.Errorf("the revert's changes event: %+v", ev.Changes)
	}

	// The user edits a.txt: a restore would overwrite it, so it is
	// refused, naming it, and nothing changes.
	writeFile(t, filepath.Join(ts.cwd, "a.txt"), "mine\n")
	var c conflictAnswer
	ts.call(t, "POST", base+"/restore", map[string]any{"turn": 1}, http.StatusConflict, &c)
	if !reflect.DeepEqual(c.Conflicts, []string{"a.txt"}) || c.Error == "" {
		t.Fatalf("conflict answer %+v, want a.txt", c)
	}
	if got := fileText(t, filepath.Join(ts.cwd, "gone.txt")); got != "(none)" {
		t.Errorf("gone.txt after a refused restore: %q", got)
	}
	c = conflictAnswer{}
	ts.call(t, "POST", base+"/revert", map[string]any{"turn": 1, "path": "a.txt"}, http.StatusConflict, &c)
	if !reflect.DeepEqual(c.Conflicts, []string{"a.txt"}) {
		t.Fatalf("revert's conflict answer %+v, want a.txt", c)
	}
	// Forced, it brings back the state before the turn.
	ts.call(t, "POST", base+"/restore", map[string]any{"turn": 1, "force": true}, http.StatusOK, nil)
	for name, want := range map[string]string{"a.txt": "old\n", "gone.txt": "bye\n", "keep.txt": "keep\n", "made.txt": "(none)"} {
		if got := fileText(t, filepath.Join(ts.cwd, name)); got != want {
			t.Errorf("%s after the forced restore: %q, want %q", name, got, want)
		}
	}
	if status := gitIn(t, ts.cwd, "status", "--porcelain"); status != "" {
		t.Errorf("the user's repository after the restore: %q", status)
	}

	// While a turn runs, a restore is refused.
	ts.call(t, "POST", base+"/prompt", map[string]string{"text": "hold"}, http.StatusAccepted, nil)
	live.until(t, kind(bridge.KindTurnStart))
	var e apiError
	ts.call(t, "POST", base+"/restore", map[string]any{"turn": 1}, http.StatusConflict, &e)
	if !strings.Contains(e.Error, bridge.ErrBusy.Error()) {
		t.Errorf("restore during a turn: %q", e.Error)
	}
	ts.call(t, "POST", base+"/cancel", map[string]any{}, http.StatusAccepted, nil)
	live.until(t, kind(bridge.KindTurnEnd))
}

// TestChangesNeedCheckpoints: a server without them (no git) records no
// turns, and says so when asked for a diff.
func TestChangesNeedCheckpoints(t *testing.T) {
	dir := t.TempDir()
	cwd := filepath.Join(dir, "ws")
	if err := os.Mkdir(cwd, 0o755); err != nil {
		t.Fatal(err)
	}
	ts := startServerConfig(t, filepath.Join(dir, "journal.db"), serverConfig{
		Agents: []agentSpec{fakeAgent(t, "changer", changesScript(cwd))}, Workspace: &workspace{cwd: cwd}, Terminals: true})
	key := ts.newSession(t, "changer")
	live := ts.stream(t, "?key="+key, nil)
	ts.call(t, "POST", "/api/sessions/"+key+"/prompt", map[string]string{"text": "change"}, http.StatusAccepted, nil)
	live.until(t, kind(bridge.KindTurnEnd))
	var e apiError
	ts.call(t, "GET", "/api/sessions/"+key+"/diff?turn=1", nil, http.StatusConflict, &e)
	if !strings.Contains(e.Error, "records no checkpoints") {
		t.Errorf("diff without checkpoints: %q", e.Error)
	}
}
