package checkpoint

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/acphost/acphost/internal/sshdtest"
	"github.com/acphost/acphost/internal/waitfor"
)

// inotifywaits counts the inotifywait processes watching dir.
func inotifywaits(t *testing.T, dir string) int {
	t.Helper()
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	n := 0
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		args := bytes.Split(b, []byte{0})
		if len(args) > 0 && filepath.Base(string(args[0])) == "inotifywait" && bytes.Contains(b, []byte(dir)) {
			n++
		}
	}
	return n
}

// TestWatchOverSSHD: on an SSH host with inotifywait, Watch reports what
// changes there (ignored files not), and stop ends inotifywait.
func TestWatchOverSSHD(t *testing.T) {
	if _, err := exec.LookPath("inotifywait"); err != nil {
		t.Skip("inotifywait (inotify-tools) is not installed on this host")
	}
	srv := sshdtest.Start(t)
	// What the login's startup files print is not an event.
	srv.SetStartup(t, `printf 'said at startup\000'`)
	client := srv.Dial(t)
	runner := SSH{Dial: func(context.Context) (*ssh.Client, error) { return client, nil }}
	ws := tempDir(t)
	userGit(t, ws, "init", "-q")
	write(t, filepath.Join(ws, ".gitignore"), "*.log\n", 0o644)
	write(t, filepath.Join(ws, "keep.txt"), "keep\n", 0o644)
	write(t, filepath.Join(ws, "gone.txt"), "bye\n", 0o644)
	s, err := Open(testCtx(t), Options{Workspace: ws, Runner: runner, Dir: filepath.Join(tempDir(t), "cp")})
	if err != nil {
		t.Fatal(err)
	}
	log := newWatchLog()
	stop, err := s.Watch(testCtx(t), log.report)
	if err != nil {
		t.Fatalf("Watch over ssh: %v; sshd: %s", err, srv.Log())
	}
	defer stop()
	if n := inotifywaits(t, ws); n != 1 {
		t.Errorf("%d inotifywait processes watch the workspace, want 1", n)
	}
	write(t, filepath.Join(ws, "keep.txt"), "changed\n", 0o644)
	if err := os.Remove(filepath.Join(ws, "gone.txt")); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(ws, "new/sub/deep.txt"), "deep\n", 0o644)
	write(t, filepath.Join(ws, "debug.log"), "ignored\n", 0o644)
	write(t, filepath.Join(ws, ".git/description"), "touched\n", 0o644)
	write(t, filepath.Join(ws, "last.txt"), "end\n", 0o644)
	log.waitFor(t, "the last write's report", func(files map[string]string, _ error) bool { return files["last.txt"] != "" })
	stop()
	want := map[string]string{"keep.txt": "M", "gone.txt": "D", "new/sub/deep.txt": "A", "last.txt": "A"}
	log.mu.Lock()
	for p, status := range want {
		if log.files[p] != status {
			t.Errorf("%s reported %q, want %q", p, log.files[p], status)
		}
	}
	for p := range log.files {
		if _, ok := want[p]; !ok {
			t.Errorf("%s reported (%s), but it is ignored", p, log.files[p])
		}
	}
	if log.err != nil {
		t.Errorf("the watch ended with %v", log.err)
	}
	log.mu.Unlock()
	waitfor.Until(t, "inotifywait to end after stop", func() bool { return inotifywaits(t, ws) == 0 })

	// Past the cap, the watch does not start.
	capped, err := Open(testCtx(t), Options{Workspace: ws, Runner: runner, Dir: filepath.Join(tempDir(t), "cp"), MaxWatchedDirs: 2})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := capped.Watch(testCtx(t), log.report); err == nil || !strings.Contains(err.Error(), "more than 2 directories") {
		t.Errorf("Watch of 3 directories with a cap of 2 = %v", err)
	}
}

// TestWatchOverSSHDWithoutInotifywait: a host without inotifywait (the
// login's PATH finds none) fails Watch with exec.ErrNotFound, and the
// checkpoints still work.
func TestWatchOverSSHDWithoutInotifywait(t *testing.T) {
	srv := sshdtest.Start(t)
	// The login's PATH finds a program named inotifywait that answers as a
	// shell does for a program it cannot find.
	bin := tempDir(t)
	write(t, filepath.Join(bin, "inotifywait"), "#!/bin/sh\necho 'inotifywait: not found' >&2\nexit 127\n", 0o755)
	srv.SetStartup(t, "PATH="+bin+":$PATH; export PATH\n")
	client := srv.Dial(t)
	runner := SSH{Dial: func(context.Context) (*ssh.Client, error) { return client, nil }}
	ws := tempDir(t)
	write(t, filepath.Join(ws, "a.txt"), "a\n", 0o644)
	s, err := Open(testCtx(t), Options{Workspace: ws, Runner: runner, Dir: filepath.Join(tempDir(t), "cp")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Watch(testCtx(t), func([]Change, error) {}); !errors.Is(err, exec.ErrNotFound) {
		t.Fatalf("Watch on a host without inotifywait = %v, want exec.ErrNotFound", err)
	}
	before := snap(t, s, "before")
	write(t, filepath.Join(ws, "a.txt"), "b\n", 0o644)
	end := snap(t, s, "end")
	if changes, err := s.Changes(testCtx(t), before.ID, end.ID); err != nil || len(changes) != 1 {
		t.Errorf("changes without a watcher = %+v, %v", changes, err)
	}
}
