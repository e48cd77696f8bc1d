package checkpoint

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
)

func TestChangesAndDiff(t *testing.T) {
	ws := tempDir(t)
	write(t, filepath.Join(ws, "keep.txt"), "a\nb\nc\n", 0o644)
	write(t, filepath.Join(ws, "gone.txt"), "x\ny\n", 0o644)
	long := strings.Repeat("a line that stays the same when the file moves\n", 20)
	write(t, filepath.Join(ws, "old/name.txt"), long, 0o644)
	write(t, filepath.Join(ws, "bin.dat"), "\x00\x01\x02", 0o644)
	s := open(t, ws, Options{})
	before := snap(t, s, "before")

	write(t, filepath.Join(ws, "keep.txt"), "a\nB\nc\nd\n", 0o644)
	if err := os.Remove(filepath.Join(ws, "gone.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(ws, "old/name.txt"), filepath.Join(ws, "new.txt")); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(ws, "dir/added.txt"), "1\n2\n3\n", 0o644)
	write(t, filepath.Join(ws, "bin.dat"), "\x00\x01\x03", 0o644)
	after := snap(t, s, "after")

	got, err := s.Changes(testCtx(t), before.ID, after.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := []Change{
		{Status: "M", Path: "bin.dat", Binary: true},
		{Status: "A", Path: "dir/added.txt", Added: 3},
		{Status: "D", Path: "gone.txt", Removed: 2},
		{Status: "M", Path: "keep.txt", Added: 2, Removed: 1},
		{Status: "R", Path: "new.txt", OldPath: "old/name.txt"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Changes =\n%+v\nwant\n%+v", got, want)
	}
	if byName, err := s.Changes(testCtx(t), "before", "after"); err != nil || !reflect.DeepEqual(byName, want) {
		t.Errorf("Changes by name = %+v, %v", byName, err)
	}
	if _, err := s.Changes(testCtx(t), "--output=/tmp/x", "after"); err == nil {
		t.Error("an option passed as a checkpoint was accepted")
	}
	diff, err := s.Diff(testCtx(t), before.ID, after.ID, "keep.txt")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"--- a/keep.txt", "+++ b/keep.txt", "-b", "+B", "+d"} {
		if !strings.Contains(diff, "\n"+line+"\n") {
			t.Errorf("diff lacks %q:\n%s", line, diff)
		}
	}
	if strings.Contains(diff, "added.txt") {
		t.Errorf("diff of keep.txt names another file:\n%s", diff)
	}
	if none, err := s.Changes(testCtx(t), after.ID, snap(t, s, "again").ID); err != nil || len(none) != 0 {
		t.Errorf("Changes with nothing changed = %v, %v", none, err)
	}
}

// TestUserRepositoryUntouched: a repository with staged and unstaged
// changes, an untracked and an ignored file, a stash and a hook is
// byte for byte the same after snapshots and restores.
func TestUserRepositoryUntouched(t *testing.T) {
	ws := tempDir(t)
	userGit(t, ws, "init", "-q")
	write(t, filepath.Join(ws, ".gitignore"), "*.log\n", 0o644)
	write(t, filepath.Join(ws, "a.txt"), "one\n", 0o644)
	userGit(t, ws, "add", ".")
	userGit(t, ws, "commit", "-qm", "first")
	write(t, filepath.Join(ws, "a.txt"), "stashed\n", 0o644)
	userGit(t, ws, "stash", "-q")
	write(t, filepath.Join(ws, "a.txt"), "staged\n", 0o644)
	userGit(t, ws, "add", "a.txt")
	write(t, filepath.Join(ws, "a.txt"), "unstaged\n", 0o644)
	write(t, filepath.Join(ws, "new.txt"), "untracked\n", 0o644)
	write(t, filepath.Join(ws, "debug.log"), "ignored\n", 0o644)
	marker := filepath.Join(tempDir(t), "hook-ran")
	write(t, filepath.Join(ws, ".git/hooks/post-index-change"), "#!/bin/sh\ntouch "+marker+"\n", 0o755)
	write(t, filepath.Join(ws, ".git/hooks/post-checkout"), "#!/bin/sh\ntouch "+marker+"\n", 0o755)
	state := gitState(t, ws)
	files := tree(t, ws, false)

	s := open(t, ws, Options{})
	before := snap(t, s, "before")
	write(t, filepath.Join(ws, "a.txt"), "agent\n", 0o644)
	write(t, filepath.Join(ws, "agent.txt"), "agent\n", 0o644)
	write(t, filepath.Join(ws, "agent.log"), "ignored too\n", 0o644)
	end := snap(t, s, "end")
	changes, err := s.Changes(testCtx(t), before.ID, end.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(changes) != 2 || changes[0].Path != "a.txt" || changes[1].Path != "agent.txt" {
		t.Fatalf("changes = %+v, want a.txt and agent.txt (ignored files left out)", changes)
	}
	if _, err := s.Restore(testCtx(t), before.ID, false); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(ws, "agent.log")); err != nil {
		t.Fatal(err)
	}
	sameTree(t, "workspace after restore", tree(t, ws, false), files)
	if got := gitState(t, ws); got != state {
		t.Errorf("the user's repository changed:\nbefore:\n%s\nafter:\n%s", state, got)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("a hook of the user's repository ran")
	}
}

func TestIgnoreRules(t *testing.T) {
	ws := tempDir(t)
	userGit(t, ws, "init", "-q")
	write(t, filepath.Join(ws, ".gitignore"), "build/\n", 0o644)
	write(t, filepath.Join(ws, ".git/info/exclude"), "secret.env\n", 0o644)
	write(t, filepath.Join(ws, "sub/.gitignore"), "*.tmp\n", 0o644)
	for _, p := range []string{"build/out.o", "secret.env", "sub/x.tmp", "sub/x.go", "main.go"} {
		write(t, filepath.Join(ws, p), p, 0o644)
	}
	s := open(t, ws, Options{})
	empty := snap(t, s, "empty") // nothing is recorded before the first snapshot, so compare with a tree
	_ = empty
	got := lsTree(t, s, empty.ID)
	want := []string{".gitignore", "main.go", "sub/.gitignore", "sub/x.go"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("recorded %q, want %q", got, want)
	}
}

// lsTree lists a checkpoint's files.
func lsTree(t *testing.T, s *Store, id string) []string {
	t.Helper()
	out, err := s.git(testCtx(t), nil, "ls-tree", "-r", "-z", "--name-only", id)
	if err != nil {
		t.Fatal(err)
	}
	return splitZ(out)
}

func TestLimits(t *testing.T) {
	ws := tempDir(t)
	write(t, filepath.Join(ws, "small.txt"), "small", 0o644)
	write(t, filepath.Join(ws, "grows.txt"), "small", 0o644)
	write(t, filepath.Join(ws, "big.bin"), strings.Repeat("x", 101), 0o644)
	s := open(t, ws, Options{MaxFileSize: 100, MaxFiles: 2})
	first := snap(t, s, "first")
	if !reflect.DeepEqual(first.Skipped, []Skipped{{Path: "big.bin", Reason: "larger than 100 bytes"}}) {
		t.Errorf("skipped = %+v", first.Skipped)
	}
	if got := lsTree(t, s, first.ID); !reflect.DeepEqual(got, []string{"grows.txt", "small.txt"}) {
		t.Errorf("recorded %q", got)
	}
	write(t, filepath.Join(ws, "grows.txt"), strings.Repeat("y", 200), 0o644)
	write(t, filepath.Join(ws, "third.txt"), "3", 0o644)
	write(t, filepath.Join(ws, "fourth.txt"), "4", 0o644)
	second := snap(t, s, "second")
	var reasons []string
	for _, k := range second.Skipped {
		reasons = append(reasons, k.Path+": "+k.Reason)
	}
	want := []string{"grows.txt: larger than 100 bytes", "big.bin: larger than 100 bytes", "third.txt: over the cap of 2 files"}
	if !reflect.DeepEqual(reasons, want) {
		t.Errorf("skipped = %q, want %q", reasons, want)
	}
	if got := lsTree(t, s, second.ID); !reflect.DeepEqual(got, []string{"fourth.txt", "small.txt"}) {
		t.Errorf("recorded %q", got)
	}
}

func TestNonUTF8Name(t *testing.T) {
	ws := tempDir(t)
	name := "caf\xe9 \"quoted\"\tand\nnewline.txt"
	write(t, filepath.Join(ws, name), "before\n", 0o644)
	s := open(t, ws, Options{})
	before := snap(t, s, "before")
	write(t, filepath.Join(ws, name), "after\n", 0o644)
	end := snap(t, s, "end")
	changes, err := s.Changes(testCtx(t), before.ID, end.ID)
	if err != nil || len(changes) != 1 || changes[0].Path != name {
		t.Fatalf("changes = %+v, %v; want the name's own bytes", changes, err)
	}
	if _, err := s.RevertFile(testCtx(t), name, before.ID, false); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, name)); string(b) != "before\n" {
		t.Errorf("reverted file = %q", b)
	}
}

func TestNoGit(t *testing.T) {
	bin := tempDir(t)
	for _, tool := range []string{"mkdir", "sh"} {
		p, err := exec.LookPath(tool)
		if err != nil {
			t.Skip(tool, "not found")
		}
		if err := os.Symlink(p, filepath.Join(bin, tool)); err != nil {
			t.Fatal(err)
		}
	}
	_, err := Open(testCtx(t), Options{Workspace: tempDir(t), Dir: filepath.Join(tempDir(t), "cp"), Runner: pathRunner{bin}})
	if !errors.Is(err, ErrNoGit) {
		t.Fatalf("Open without git = %v, want ErrNoGit", err)
	}
}

// pathRunner runs locally with PATH set to one directory.
type pathRunner struct{ dir string }

func (r pathRunner) Run(ctx context.Context, args, env []string, stdin []byte) ([]byte, error) {
	return Local{}.Run(ctx, args, append(env, "PATH="+r.dir), stdin)
}

func TestDirInsideWorkspaceRefused(t *testing.T) {
	ws := tempDir(t)
	if _, err := Open(testCtx(t), Options{Workspace: ws, Dir: filepath.Join(ws, ".checkpoints")}); err == nil || !strings.Contains(err.Error(), "inside the workspace") {
		t.Fatalf("Open with Dir in the workspace = %v", err)
	}
}

func TestDefaultDir(t *testing.T) {
	cache, ws := tempDir(t), tempDir(t)
	t.Setenv("GIT_DIR", filepath.Join(ws, "not-this")) // an app's own GIT_DIR is ignored
	r := envRunner{Local{}, "XDG_CACHE_HOME=" + cache}
	dirOf := func(name string) string {
		s, err := Open(testCtx(t), Options{Workspace: ws, Name: name, Runner: r})
		if err != nil {
			t.Fatal(err)
		}
		snap(t, s, "x")
		return s.opt.Dir
	}
	a, b, again := dirOf("session-a"), dirOf("session-b"), dirOf("session-a")
	if !strings.HasPrefix(a, filepath.Join(cache, "acphost", "checkpoints")+"/") || a == b || a != again {
		t.Errorf("dirs %s, %s, %s: want two distinct ones under %s", a, b, again, cache)
	}
	if _, err := os.Stat(filepath.Join(a, "HEAD")); err != nil {
		t.Errorf("no git directory at %s: %v", a, err)
	}
}

// TestOtherRefStorage: in a git directory whose refs are not loose files
// (a reftable directory says so) checkpoints are named through git.
func TestOtherRefStorage(t *testing.T) {
	ws := tempDir(t)
	write(t, filepath.Join(ws, "a.txt"), "a", 0o644)
	dir := open(t, ws, Options{}).opt.Dir
	if err := os.Mkdir(filepath.Join(dir, "reftable"), 0o755); err != nil {
		t.Fatal(err)
	}
	// A Store learns its git directory's ref storage when it opens it.
	s := open(t, ws, Options{Dir: dir})
	snap(t, s, "one")
	write(t, filepath.Join(ws, "a.txt"), "b", 0o644)
	snap(t, s, "two")
	// update-ref keeps a log of the ref, which the loose-file writer does not.
	if _, err := os.Stat(filepath.Join(s.opt.Dir, "logs", "HEAD")); err != nil {
		t.Fatalf("HEAD was not moved by update-ref: %v", err)
	}
	if changes, err := s.Changes(testCtx(t), "one", "two"); err != nil || len(changes) != 1 {
		t.Errorf("Changes = %+v, %v", changes, err)
	}
	if head, err := os.ReadFile(filepath.Join(s.opt.Dir, "HEAD")); err != nil || strings.HasPrefix(string(head), "ref:") {
		t.Errorf("HEAD = %q, %v: want the last checkpoint, detached", head, err)
	}
}

// recordingRunner runs locally and records each command's arguments.
type recordingRunner struct {
	mu   sync.Mutex
	runs [][]string
}

func (r *recordingRunner) Run(ctx context.Context, args, env []string, stdin []byte) ([]byte, error) {
	r.mu.Lock()
	r.runs = append(r.runs, args)
	r.mu.Unlock()
	return Local{}.Run(ctx, args, env, stdin)
}

// took returns the commands run since the last call.
func (r *recordingRunner) took() [][]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	runs := r.runs
	r.runs = nil
	return runs
}

// TestOpenIsOneCommand: opening a Store, new or found again, is one
// command (one round trip over SSH), the cache directory found in it; a
// new git directory has no sample hooks, and its first checkpoint does
// not count the files of its empty index.
func TestOpenIsOneCommand(t *testing.T) {
	ws := tempDir(t)
	write(t, filepath.Join(ws, "a.txt"), "a\n", 0o644)
	r := &recordingRunner{}
	cache := tempDir(t)
	env := envRunner{r, "XDG_CACHE_HOME=" + cache}
	s, err := Open(testCtx(t), Options{Workspace: ws, Runner: env})
	if err != nil {
		t.Fatal(err)
	}
	if runs := r.took(); len(runs) != 1 {
		t.Fatalf("Open ran %d commands, want 1: %q", len(runs), runs)
	}
	if !strings.HasPrefix(s.opt.Dir, cache+"/") {
		t.Fatalf("Dir %s, want it under %s", s.opt.Dir, cache)
	}
	if _, err := os.Stat(filepath.Join(s.opt.Dir, "hooks")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the git directory has hooks (%v): git init copied its templates", err)
	}
	snap(t, s, "first")
	for _, args := range r.took() {
		if slices.Contains(args, "ls-files") {
			t.Errorf("the first checkpoint of a new Store counted the index: %q", args)
		}
	}
	again, err := Open(testCtx(t), Options{Workspace: ws, Runner: env})
	if err != nil {
		t.Fatal(err)
	}
	if runs := r.took(); len(runs) != 1 || slices.Contains(runs[0], "init") {
		t.Fatalf("opening again ran %q, want one command and no git init", runs)
	}
	if again.opt.Dir != s.opt.Dir {
		t.Fatalf("opened again at %s, want %s", again.opt.Dir, s.opt.Dir)
	}
	if cp := snap(t, again, "second"); cp.ID == "" {
		t.Fatal("no checkpoint after opening again")
	}
}

// TestNoGitFoundAgain: a git directory made earlier does not hide that
// git is gone.
func TestNoGitFoundAgain(t *testing.T) {
	ws, dir := tempDir(t), filepath.Join(tempDir(t), "cp")
	open(t, ws, Options{Dir: dir})
	bin := tempDir(t)
	p, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("sh not found")
	}
	if err := os.Symlink(p, filepath.Join(bin, "sh")); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(testCtx(t), Options{Workspace: ws, Dir: dir, Runner: pathRunner{bin}}); !errors.Is(err, ErrNoGit) {
		t.Fatalf("Open again without git = %v, want ErrNoGit", err)
	}
}

// TestOpenLocal: a local Store is prepared in this process, with no
// command, and records checkpoints with no shell. Its directory is
// under XDG_CACHE_HOME, else ~/.cache, with no sample hooks and the
// attributes that keep bytes as they are; ErrNoGit without git, and an
// error naming a cache directory that is not absolute.
func TestOpenLocal(t *testing.T) {
	ws, cache, home := tempDir(t), tempDir(t), tempDir(t)
	write(t, filepath.Join(ws, "a.txt"), "a\r\n", 0o644)
	t.Setenv("HOME", home)
	t.Setenv("XDG_CACHE_HOME", cache)
	// Wrappers first on PATH log each program a Store starts.
	bin, log := tempDir(t), filepath.Join(tempDir(t), "ran")
	shell, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("sh not found")
	}
	for _, tool := range []string{"git", "sh", "mkdir"} {
		p, err := exec.LookPath(tool)
		if err != nil {
			t.Skip(tool, " not found")
		}
		write(t, filepath.Join(bin, tool), "#!"+shell+"\necho "+tool+" >> "+log+"\nexec "+p+` "$@"`+"\n", 0o755)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	ran := func() string {
		b, _ := os.ReadFile(log)
		os.Remove(log)
		return strings.Join(strings.Fields(string(b)), " ")
	}
	s, err := Open(testCtx(t), Options{Workspace: ws, Name: "n"})
	if err != nil {
		t.Fatal(err)
	}
	if r := ran(); r != "" {
		t.Errorf("a new Store ran %q, want nothing: its git directory is made in this process", r)
	}
	if !strings.HasPrefix(s.opt.Dir, filepath.Join(cache, "acphost", "checkpoints")+"/") {
		t.Errorf("Dir %s, want it under %s", s.opt.Dir, cache)
	}
	if _, err := os.Stat(filepath.Join(s.opt.Dir, "hooks")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the git directory has hooks (%v): git init copied its templates", err)
	}
	if b, err := os.ReadFile(filepath.Join(s.opt.Dir, "info", "attributes")); err != nil || string(b) != "* -text -ident -filter !eol !working-tree-encoding\n" {
		t.Errorf("attributes = %q, %v", b, err)
	}
	if !s.counted || s.files != 0 {
		t.Errorf("a new git directory: counted %v, files %d; want its empty index known", s.counted, s.files)
	}
	first := snap(t, s, "first")
	if r := ran(); strings.Contains(r, "sh") || strings.Contains(r, "mkdir") {
		t.Errorf("a local checkpoint ran %q: its steps are each a git, with no shell", r)
	}
	again, err := Open(testCtx(t), Options{Workspace: ws, Name: "n"})
	if err != nil {
		t.Fatal(err)
	}
	if r := ran(); r != "" {
		t.Errorf("a Store opened again ran %q, want nothing", r)
	}
	if again.opt.Dir != s.opt.Dir || again.counted {
		t.Errorf("opened again: Dir %s (want %s), counted %v (want the files counted when needed)", again.opt.Dir, s.opt.Dir, again.counted)
	}
	write(t, filepath.Join(ws, "a.txt"), "b\n", 0o644)
	second := snap(t, again, "second")
	if changes, err := again.Changes(testCtx(t), first.ID, second.ID); err != nil || len(changes) != 1 || changes[0].Path != "a.txt" || changes[0].Status != "M" {
		t.Errorf("the Store opened again: changes since the first checkpoint %+v, %v; want a.txt modified", changes, err)
	}

	t.Setenv("XDG_CACHE_HOME", "")
	if s, err := Open(testCtx(t), Options{Workspace: ws}); err != nil || !strings.HasPrefix(s.opt.Dir, filepath.Join(home, ".cache", "acphost")+"/") {
		t.Errorf("without XDG_CACHE_HOME: %v, Dir %v; want it under %s/.cache", err, s, home)
	}
	t.Setenv("XDG_CACHE_HOME", "relative")
	if _, err := Open(testCtx(t), Options{Workspace: ws}); err == nil || !strings.Contains(err.Error(), `"relative" is not absolute`) {
		t.Errorf("a relative cache directory: %v", err)
	}
	t.Setenv("PATH", tempDir(t))
	if _, err := Open(testCtx(t), Options{Workspace: ws, Dir: filepath.Join(tempDir(t), "cp")}); !errors.Is(err, ErrNoGit) {
		t.Errorf("Open without git = %v, want ErrNoGit", err)
	}
}

// TestHalfMadeGitDir: a git directory left without its HEAD (a process
// that died while making it) is made again, and records checkpoints.
func TestHalfMadeGitDir(t *testing.T) {
	ws, dir := tempDir(t), filepath.Join(tempDir(t), "cp")
	write(t, filepath.Join(ws, "a.txt"), "a\n", 0o644)
	if err := os.MkdirAll(filepath.Join(dir, "objects"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "config"), "[core]\n", 0o644)
	s := open(t, ws, Options{Dir: dir})
	if cp := snap(t, s, "one"); cp.ID == "" {
		t.Fatal("no checkpoint")
	}
	out, err := exec.Command("git", "--git-dir", dir, "rev-parse", "--is-bare-repository").CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "true" {
		t.Errorf("git rev-parse --is-bare-repository = %q, %v; want a bare git directory", out, err)
	}
}
