// Package peertest gives the interop tests the real third-party ACP agents
// of shared/peers (beside the module, or beside a directory above it) and
// their offline fake model: it installs the agents once per test process
// with shared/peers/setup.sh into
// $ACPHOST_PEERS_DIR, else $XDG_CACHE_HOME/acphost-peers, else
// ~/.cache/acphost-peers, and skips the test when node, npm or the peers
// folder is missing. Every agent gets a fresh HOME and a minimal
// environment (Env), so nothing of the developer's configuration leaks in.
package peertest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// install is the one installation of a test process; setup.sh takes
// seconds even when warm, so the tests share it.
var install struct {
	once sync.Once
	env  map[string][]string
	dir  string // the peers folder, where mockllm.mjs is
	skip string
	err  error
}

// Peers installs the agents once per test process and returns their launch
// commands by peers.env name, each split into words.
func Peers(t testing.TB) map[string][]string {
	t.Helper()
	install.once.Do(doInstall)
	if install.skip != "" {
		t.Skip(install.skip)
	}
	if install.err != nil {
		t.Fatal(install.err)
	}
	return install.env
}

// Command returns the launch command of one agent, failing the test when
// peers.env lacks it.
func Command(t testing.TB, name string) []string {
	t.Helper()
	argv := Peers(t)[name]
	if argv == nil {
		t.Fatalf("peers.env has no %s", name)
	}
	return argv
}

func doInstall() {
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			install.skip = "interop: " + tool + " is not installed; the real agents need node and npm"
			return
		}
	}
	root, err := moduleRoot()
	if err != nil {
		install.err = err
		return
	}
	setup, ok := findSetup(root)
	if !ok {
		install.skip = "interop: no shared/peers/setup.sh beside " + root + " or above it"
		return
	}
	install.dir = filepath.Dir(setup)
	cache := cacheDir()
	if out, err := exec.Command("bash", setup, cache).CombinedOutput(); err != nil {
		install.err = fmt.Errorf("interop: %s %s: %w\n%s", setup, cache, err, out)
		return
	}
	data, err := os.ReadFile(filepath.Join(cache, "peers.env"))
	if err != nil {
		install.err = fmt.Errorf("interop: reading the launch commands: %w", err)
		return
	}
	install.env = map[string][]string{}
	for _, line := range strings.Split(string(data), "\n") {
		name, val, ok := strings.Cut(line, "=")
		if !ok || strings.HasPrefix(line, "#") {
			continue
		}
		install.env[name] = strings.Fields(strings.Trim(val, `"`))
	}
}

// moduleRoot is the directory of go.mod above the working directory.
func moduleRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for root := wd; ; {
		if _, err := os.Stat(filepath.Join(root, "go.mod")); err == nil {
			return root, nil
		}
		parent := filepath.Dir(root)
		if parent == root {
			return "", errors.New("interop: no go.mod above " + wd)
		}
		root = parent
	}
}

// findSetup looks for shared/peers/setup.sh beside the module, then beside
// each directory above it: a clone has shared/ beside it, a worktree in a
// folder of worktrees has it further up.
func findSetup(root string) (string, bool) {
	for dir := filepath.Dir(root); ; dir = filepath.Dir(dir) {
		setup := filepath.Join(dir, "shared", "peers", "setup.sh")
		if _, err := os.Stat(setup); err == nil {
			return setup, true
		}
		if dir == filepath.Dir(dir) {
			return "", false
		}
	}
}

func cacheDir() string {
	if dir := os.Getenv("ACPHOST_PEERS_DIR"); dir != "" {
		return dir
	}
	base := os.Getenv("XDG_CACHE_HOME")
	if base == "" {
		home, _ := os.UserHomeDir()
		base = filepath.Join(home, ".cache")
	}
	return filepath.Join(base, "acphost-peers")
}

// Env is a minimal environment with a fresh HOME and XDG dirs, plus extra.
func Env(t testing.TB, extra ...string) []string {
	t.Helper()
	home := t.TempDir()
	node, _ := exec.LookPath("node")
	env := []string{
		"PATH=" + filepath.Dir(node) + ":/usr/local/bin:/usr/bin:/bin",
		"HOME=" + home,
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_CACHE_HOME=" + filepath.Join(home, ".cache"),
		"XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"),
		"XDG_STATE_HOME=" + filepath.Join(home, ".local", "state"),
		"TMPDIR=" + os.TempDir(),
		"LANG=C.UTF-8",
	}
	return append(env, extra...)
}

// MockModel starts the fake model server for the test and returns its
// port; the test's cleanup stops it. Peers must have run first.
func MockModel(t testing.TB) int {
	t.Helper()
	if install.dir == "" {
		t.Fatal("peertest: MockModel before Peers")
	}
	cmd := exec.Command("node", filepath.Join(install.dir, "mockllm.mjs"), "--port", "0")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	var port int
	if _, serr := fmt.Sscanf(line, "PORT %d", &port); err != nil || serr != nil {
		t.Fatalf("mock model printed %q: %v %v", line, err, serr)
	}
	return port
}

// DiskFiles serves an agent's file reads and writes from the disk, as
// bridge.Files: the interop tests check what the agents really wrote.
type DiskFiles struct{}

// ReadTextFile reads limit lines of path from line (1-based; 0 means all).
func (DiskFiles) ReadTextFile(_ context.Context, path string, line, limit int) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	lines := strings.SplitAfter(string(data), "\n")
	if line > 1 {
		lines = lines[min(line-1, len(lines)):]
	}
	if limit > 0 && limit < len(lines) {
		lines = lines[:limit]
	}
	return strings.Join(lines, ""), nil
}

// WriteTextFile writes content to path.
func (DiskFiles) WriteTextFile(_ context.Context, path, content string) error {
	return os.WriteFile(path, []byte(content), 0o644)
}
