// Package nonroot runs a test as a user without root's permission bypass,
// so permission checks can be tested when the suite runs as root (as it
// does in containers and CI).
package nonroot

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// childEnv marks the child process Run starts.
const childEnv = "ACPHOST_TEST_AS_NOBODY"

// nobody is the unprivileged uid and gid the child runs as.
const nobody = 65534

// Run makes the calling top-level test run as a user without root's
// permission bypass. When the tests already run as such a user it returns
// true and the caller goes on. As root it runs this one test again in a
// copy of the test binary as uid/gid 65534 (nobody), fails the test if the
// child fails or skips, and returns false: the caller then returns, its
// checks done by the child.
func Run(t *testing.T) bool {
	t.Helper()
	if os.Geteuid() != 0 {
		return true
	}
	if os.Getenv(childEnv) != "" {
		t.Fatal("the child process still runs as root")
	}
	// The go tool's build directory is private to root: copy the binary
	// where nobody can run it (t.TempDir's parent is private too).
	dir, err := os.MkdirTemp("", "acphost-nobody-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(dir, "nobody.test")
	copyExecutable(t, exe)
	cmd := exec.Command(exe, "-test.run=^"+t.Name()+"$", "-test.count=1", "-test.v")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), childEnv+"=1", "HOME="+dir, "TMPDIR="+os.TempDir())
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody, Groups: []uint32{}}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("test as uid %d: %v\n%s", nobody, err, out)
	}
	if !strings.Contains(string(out), "--- PASS: "+t.Name()) {
		t.Fatalf("test as uid %d did not pass:\n%s", nobody, out)
	}
	t.Logf("ran as uid %d:\n%s", nobody, out)
	return false
}

func copyExecutable(t *testing.T, dst string) {
	t.Helper()
	src, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}
