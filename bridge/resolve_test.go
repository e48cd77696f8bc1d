package bridge

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/internal/fakebin"
)

// exe writes an executable file.
func exe(t *testing.T, path, body string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestResolverOrder(t *testing.T) {
	// Each case installs the binary in some places; the first place in the
	// resolver's order must win.
	type where int
	const (
		inPATH where = iota
		inShell
		inNPM
		inNVM
		inLocal
		inBrew
	)
	tests := []struct {
		name   string
		places []where
		source string
		second bool // installed under the second name only
	}{
		{"PATH first", []where{inPATH, inShell, inLocal}, FoundPATH, false},
		{"login shell PATH next", []where{inShell, inNPM, inLocal}, FoundLoginShell, false},
		{"npm global bin", []where{inNPM, inLocal, inBrew}, FoundNPM, false},
		{"nvm bin counts as npm", []where{inNVM, inBrew}, FoundNPM, false},
		{"~/.local/bin", []where{inLocal, inBrew}, FoundLocalBin, false},
		{"homebrew last", []where{inBrew}, FoundHomebrew, false},
		{"the second name", []where{inLocal}, FoundLocalBin, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			home := filepath.Join(root, "home")
			dirs := map[where]string{
				inPATH:  filepath.Join(root, "path"),
				inShell: filepath.Join(root, "shellpath"),
				inNPM:   filepath.Join(home, ".npm-global", "bin"),
				inNVM:   filepath.Join(home, ".nvm", "versions", "node", "v22.1.0", "bin"),
				inLocal: filepath.Join(home, ".local", "bin"),
				inBrew:  filepath.Join(root, "brew", "bin"),
			}
			os.MkdirAll(dirs[inPATH], 0o755)
			name := "claude-agent-acp"
			if tt.second {
				name = "claude-code-acp"
			}
			for _, w := range tt.places {
				exe(t, filepath.Join(dirs[w], name), "#!/bin/sh\n")
			}
			shell := exe(t, filepath.Join(root, "fakeshell"), "#!/bin/sh\necho 'welcome banner'\nprintf '__ACPHOST_PATH__%s__ACPHOST_PATH__' '"+dirs[inShell]+"'\n")
			r := &Resolver{Env: []string{"PATH=" + dirs[inPATH] + ":relative/dir", "HOME=" + home, "SHELL=" + shell},
				HomebrewPrefixes: []string{filepath.Join(root, "brew")}}
			res, err := r.Resolve(context.Background(), "", "claude-agent-acp", "claude-code-acp")
			if err != nil {
				t.Fatal(err)
			}
			if res.Source != tt.source || res.Name != name || filepath.Dir(res.Path) == "" || !isExecutable(res.Path) {
				t.Fatalf("resolution %+v, want source %s", res, tt.source)
			}
		})
	}
}

func TestResolverOverrideAndErrors(t *testing.T) {
	root := t.TempDir()
	bin := exe(t, filepath.Join(root, "custom", "my-kiro"), "#!/bin/sh\n")
	r := &Resolver{Env: []string{"PATH=" + root, "HOME=" + root}, NoLoginShell: true, HomebrewPrefixes: []string{}}

	res, err := r.Resolve(context.Background(), bin, "kiro-cli")
	if err != nil || res.Source != FoundOverride || res.Path != bin {
		t.Fatalf("override: %+v, %v", res, err)
	}
	// A bad override is an error, not a silent fallback to another binary.
	exe(t, filepath.Join(root, "kiro-cli"), "#!/bin/sh\n")
	if _, err := r.Resolve(context.Background(), filepath.Join(root, "missing"), "kiro-cli"); !errors.Is(err, acpclient.ErrAgentNotFound) || !strings.Contains(err.Error(), "missing") {
		t.Fatalf("bad override: %v", err)
	}
	_, err = r.Resolve(context.Background(), "", "crewcoder")
	if !errors.Is(err, acpclient.ErrAgentNotFound) {
		t.Fatalf("missing binary: %v", err)
	}
	for _, want := range []string{"crewcoder", "PATH:" + root, "local-bin:" + filepath.Join(root, ".local", "bin"), "npm-global:"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

func TestResolverLoginShellTimeout(t *testing.T) {
	root := t.TempDir()
	shell := exe(t, filepath.Join(root, "slowshell"), "#!/bin/sh\nwhile :; do :; done\n")
	r := &Resolver{Env: []string{"PATH=", "HOME=" + root, "SHELL=" + shell}, ShellTimeout: 200 * time.Millisecond, HomebrewPrefixes: []string{}}
	start := time.Now()
	_, err := r.Resolve(context.Background(), "", "opencode")
	if took := time.Since(start); took > 3*time.Second {
		t.Fatalf("resolving took %v despite the timeout", took)
	}
	if err == nil || !strings.Contains(err.Error(), "did not print its PATH within") {
		t.Fatalf("error %v does not explain the login shell", err)
	}
}

// The not-found error names the program and each folder once, even when the
// login shell's PATH repeats the environment's (as it usually does).
func TestResolverNotFoundNamesEachPlaceOnce(t *testing.T) {
	root := t.TempDir()
	a, b := filepath.Join(root, "a"), filepath.Join(root, "b")
	shell := exe(t, filepath.Join(root, "shell"), "#!/bin/sh\nprintf '__ACPHOST_PATH__%s__ACPHOST_PATH__' '"+a+":"+b+":"+a+"/'\n")
	r := &Resolver{Env: []string{"PATH=" + a + ":" + b + ":" + a, "HOME=" + root, "SHELL=" + shell}, HomebrewPrefixes: []string{}}
	res, err := r.Resolve(context.Background(), "", "agent")
	if !errors.Is(err, acpclient.ErrAgentNotFound) {
		t.Fatalf("error %v", err)
	}
	msg := err.Error()
	for _, dir := range []string{a, b, filepath.Join(root, ".local", "bin")} {
		if n := strings.Count(msg, dir+":") + strings.Count(msg, dir+" ") + strings.Count(msg, dir+";"); n != 1 && !strings.HasSuffix(msg, dir) {
			t.Errorf("%s named %d times in %q", dir, n, msg)
		}
	}
	if !strings.Contains(msg, "agent; searched PATH:"+a+":"+b+" npm-global:") || strings.Contains(msg, "login-shell") {
		t.Errorf("error %q does not group the places by source", msg)
	}
	if n := len(res.Searched); n != len(slices.Compact(slices.Sorted(slices.Values(res.Searched)))) {
		t.Errorf("searched %q repeats a place", res.Searched)
	}
	// Compact: the folders, a word per source, and a short preamble.
	dirs := 0
	for _, p := range res.Searched {
		_, dir, _ := strings.Cut(p, ":")
		dirs += len(dir) + 1
	}
	if len(msg) > dirs+120 {
		t.Errorf("error is %d bytes for %d bytes of folders: %q", len(msg), dirs, msg)
	}
}

// A login shell whose rc files start a child that ignores SIGTERM and then
// hang: once the shell timeout ends the lookup, neither is left running.
func TestResolverLoginShellLeavesNothing(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("checks the process table through /proc")
	}
	root := t.TempDir()
	pids := filepath.Join(root, "pids")
	shell := exe(t, filepath.Join(root, "hangshell"), "#!/bin/sh\ntrap '' TERM\nsleep 300 &\necho $$ > '"+pids+".shell'\necho $! > '"+pids+".child'\nexec sleep 301\n")
	r := &Resolver{Env: []string{"PATH=/usr/bin:/bin", "HOME=" + root, "SHELL=" + shell}, ShellTimeout: time.Second, HomebrewPrefixes: []string{}}
	if _, err := r.Resolve(context.Background(), "", "no-such-agent"); err == nil || !strings.Contains(err.Error(), "did not print its PATH within") {
		t.Fatalf("error %v does not explain the login shell", err)
	}
	fakebin.WaitGone(t, fakebin.PidFrom(t, pids+".shell"), "the login shell")
	fakebin.WaitGone(t, fakebin.PidFrom(t, pids+".child"), "the login shell's child")
}
