package bridge_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/acphost/acphost/acptest"
	"github.com/acphost/acphost/bridge"
)

// ExampleWorktree opens a session in a worktree of its own, on a new
// branch of the user's repository, and deletes it: the worktree goes, the
// branch stays.
func ExampleWorktree() {
	ctx := context.Background()
	tmp, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(tmp)
	repo := filepath.Join(tmp, "repo")
	git := func(args ...string) string {
		cmd := exec.Command("git", append([]string{"-C", repo}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=u", "GIT_AUTHOR_EMAIL=u@x", "GIT_COMMITTER_NAME=u", "GIT_COMMITTER_EMAIL=u@x")
		out, err := cmd.CombinedOutput()
		if err != nil {
			log.Fatalf("git %v: %v: %s", args, err, out)
		}
		return string(out)
	}
	_ = os.MkdirAll(repo, 0o755)
	git("init", "-q")
	git("commit", "-q", "--allow-empty", "-m", "start")

	host := bridge.NewHost(nil)
	defer host.Shutdown(ctx)
	go func() {
		for range host.Events() { // an app reads them; this one drops them
		}
	}()
	b, err := host.Start(ctx, bridge.Config{ID: "demo", Transport: &acptest.Transport{}})
	if err != nil {
		log.Fatal(err)
	}
	dir := filepath.Join(tmp, "feature")
	session, err := b.OpenSession(ctx, bridge.SessionConfig{Cwd: repo,
		Worktree: &bridge.Worktree{Branch: "feature", Dir: dir}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(git("-C", dir, "branch", "--show-current"))
	if err := session.Delete(ctx); err != nil {
		log.Fatal(err)
	}
	_, err = os.Stat(dir)
	fmt.Println("worktree removed:", os.IsNotExist(err))
	fmt.Print(git("branch", "--list", "feature"))
	// Output:
	// feature
	// worktree removed: true
	//   feature
}
