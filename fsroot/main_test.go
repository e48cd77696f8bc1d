package fsroot

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/acphost/acphost/internal/sshtest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	runSFTPClientIfAsked()
	goleak.VerifyTestMain(m)
}

// rootKind builds one kind of Root over a local directory, so a table of
// cases runs against Local and against SFTP (through the in-process server,
// which serves the same local files).
type rootKind struct {
	name string
	open func(t *testing.T, cwd string, opts *Options) Root
}

func openLocal(t *testing.T, cwd string, opts *Options) Root {
	t.Helper()
	r, err := NewLocal(cwd, opts)
	if err != nil {
		t.Fatalf("NewLocal: %v", err)
	}
	t.Cleanup(func() { _ = r.Close() })
	return r
}

func openSFTP(t *testing.T, cwd string, opts *Options) Root {
	t.Helper()
	srv := sshtest.Start(t, nil)
	r, err := NewSFTP(context.Background(), srv.Dial(t), cwd, opts)
	if err != nil {
		t.Fatalf("NewSFTP: %v", err)
	}
	t.Cleanup(func() { _ = r.Close() })
	return r
}

var rootKinds = []rootKind{
	{"local", openLocal},
	{"sftp", openSFTP},
}

// forEachRoot runs f as a subtest for every root kind.
func forEachRoot(t *testing.T, f func(t *testing.T, kind rootKind)) {
	for _, kind := range rootKinds {
		t.Run(kind.name, func(t *testing.T) { f(t, kind) })
	}
}

// tempDir returns a fresh directory with symlinks resolved, so expected
// paths compare equal to what a root reports.
func tempDir(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func writeFile(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// noTempFiles fails when an atomic-write temporary is left in dir.
func noTempFiles(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if isTempName(e.Name()) {
			t.Errorf("temporary file left behind: %s", e.Name())
		}
	}
}
