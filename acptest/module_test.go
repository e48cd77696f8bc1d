package acptest_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// BuildBinary runs "go build" of the fakeagent package in the module of the
// test's working directory, which for an app is the app's module: the
// package must resolve through a module graph that merely requires this
// one (here by a replace directive to this checkout).
func TestFakeAgentBuildsFromAnotherModule(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	app := t.TempDir()
	mod := "module example.com/app\n\ngo 1.26.0\n\nrequire github.com/acphost/acphost v0.0.0\n\nreplace github.com/acphost/acphost => " + root + "\n"
	if err := os.WriteFile(filepath.Join(app, "go.mod"), []byte(mod), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(app, "go.sum"), sum, 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(app, "fakeagent")
	build := exec.Command("go", "build", "-o", bin, "github.com/acphost/acphost/acptest/cmd/fakeagent")
	build.Dir = app
	// Offline and without this module's flags: only the app's graph counts.
	build.Env = append(os.Environ(), "GOFLAGS=", "GOPROXY=off", "GOWORK=off")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build in an app module: %v\n%s", err, out)
	}
	run := exec.Command(bin, "-script", "/dev/null")
	out, _ := run.CombinedOutput()
	// An empty file is not a script: the binary that was built is the
	// fakeagent, and it says so.
	if !strings.Contains(string(out), "fakeagent:") {
		t.Errorf("built program printed %q, want the fakeagent's script error", out)
	}
}
