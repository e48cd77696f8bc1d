package checkpoint

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// testCtx bounds every git command of a test.
func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// tempDir is a fresh directory with its symlinks resolved.
func tempDir(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func write(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

// userGit runs git as the user would in their own repository dir, with a
// configuration of the test's own.
func userGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=u", "GIT_AUTHOR_EMAIL=u@x", "GIT_COMMITTER_NAME=u", "GIT_COMMITTER_EMAIL=u@x",
		"GIT_OPTIONAL_LOCKS=0", "LC_ALL=C"}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v in %s: %v\n%s", args, dir, err, out)
	}
	return string(out)
}

// tree is a workspace's files as a map from path to "mode content" (a
// symlink: "link target"), directories left out, the .git of dir itself
// out unless withGit.
func tree(t *testing.T, dir string, withGit bool) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			if rel == ".git" && !withGit {
				return filepath.SkipDir
			}
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if info.Mode()&fs.ModeSymlink != 0 {
			target, err := os.Readlink(p)
			files[rel] = "link " + target
			return err
		}
		b, err := os.ReadFile(p)
		files[rel] = info.Mode().Perm().String() + " " + string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// gitState fingerprints everything of the user's repository a checkpoint
// must leave alone: every byte under .git (index, refs, stash, hooks,
// config, objects, logs) and what git status says.
func gitState(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	files := tree(t, filepath.Join(dir, ".git"), true)
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		sum := sha256.Sum256([]byte(files[name]))
		b.WriteString(name + " " + hex.EncodeToString(sum[:8]) + "\n")
	}
	b.WriteString(userGit(t, dir, "status", "--porcelain", "--untracked-files=all"))
	b.WriteString(userGit(t, dir, "stash", "list"))
	b.WriteString(userGit(t, dir, "for-each-ref"))
	return b.String()
}

// open opens a Store for ws with its git directory in a temp dir.
func open(t *testing.T, ws string, opt Options) *Store {
	t.Helper()
	opt.Workspace = ws
	if opt.Dir == "" {
		opt.Dir = filepath.Join(tempDir(t), "checkpoints")
	}
	s, err := Open(testCtx(t), opt)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return s
}

func snap(t *testing.T, s *Store, name string) Checkpoint {
	t.Helper()
	cp, err := s.Snapshot(testCtx(t), name)
	if err != nil {
		t.Fatalf("Snapshot %s: %v", name, err)
	}
	return cp
}

func sameTree(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	for p, w := range want {
		if g, ok := got[p]; !ok {
			t.Errorf("%s: %s missing", what, p)
		} else if g != w {
			t.Errorf("%s: %s = %.60q, want %.60q", what, p, g, w)
		}
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			t.Errorf("%s: %s should not be there", what, p)
		}
	}
}

// cmdFails runs a user git command that is meant to fail.
func cmdFails(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=u", "GIT_AUTHOR_EMAIL=u@x", "GIT_COMMITTER_NAME=u", "GIT_COMMITTER_EMAIL=u@x", "LC_ALL=C"}
	if out, err := cmd.CombinedOutput(); err == nil {
		t.Fatalf("git %v succeeded:\n%s", args, out)
	}
}
