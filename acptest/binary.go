package acptest

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

// Environment variables the fakeagent binary reads when its flags are not
// given.
const (
	EnvScript = "ACPTEST_SCRIPT"
	EnvRecord = "ACPTEST_RECORD"
)

const fakeAgentPackage = "github.com/acphost/acphost/acptest/cmd/fakeagent"

var (
	buildOnce sync.Once
	buildPath string
	buildErr  error
)

// BuildBinary builds the fakeagent command once per test process and
// returns the path of the binary, for tests that need the fake agent as a
// real process. It runs "go build" in the module that holds the working
// directory (for an app, its own module, which requires this one), so the
// go command must be on PATH; the binary lives in a directory under the
// system temp dir named after that module, so repeated test runs reuse one
// directory instead of leaving new ones behind.
func BuildBinary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() { buildPath, buildErr = build() })
	if buildErr != nil {
		t.Fatalf("acptest: building fakeagent: %v", buildErr)
	}
	return buildPath
}

func build() (string, error) {
	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(root))
	dir := filepath.Join(os.TempDir(), "acptest-fakeagent-"+hex.EncodeToString(sum[:6]))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	name := "fakeagent"
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	// Build to a private name, then rename: other test processes may be
	// running the binary at the final path right now.
	tmp, err := os.CreateTemp(dir, "build-*-"+name)
	if err != nil {
		return "", err
	}
	tmp.Close()
	defer os.Remove(tmp.Name())
	cmd := exec.Command("go", "build", "-o", tmp.Name(), fakeAgentPackage)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	final := filepath.Join(dir, name)
	if err := os.Rename(tmp.Name(), final); err != nil {
		return "", err
	}
	return final, nil
}

// moduleRoot walks up from the working directory to the one with go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}

// WriteScript writes script as JSON to a file in a test temp dir and
// returns its path, for the fakeagent's -script flag.
func WriteScript(t testing.TB, script Script) string {
	t.Helper()
	b, err := json.Marshal(script)
	if err != nil {
		t.Fatalf("acptest: encoding script: %v", err)
	}
	path := filepath.Join(t.TempDir(), "script.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatalf("acptest: %v", err)
	}
	return path
}

// ReadRecord parses the file the fakeagent's -record flag wrote: the
// messages it received, in order. Lines that are not JSON objects (junk the
// client sent) are skipped.
func ReadRecord(path string) ([]Message, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var msgs []Message
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, len(b)+1)
	for sc.Scan() {
		m, _, err := parseMessage(sc.Bytes())
		if err != nil {
			continue
		}
		msgs = append(msgs, m)
	}
	return msgs, sc.Err()
}
