package terminal_test

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/bridge/terminal"
)

// TestLocalProgramRelativeToCwd: a program path relative to the
// terminal's cwd is taken from there, not from the host's directory.
func TestLocalProgramRelativeToCwd(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "run.sh"), []byte("#!/bin/sh\necho from cwd\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	p, err := terminal.Local{}.Start(context.Background(), terminal.Command{Command: "./run.sh", Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	out, _ := io.ReadAll(p)
	if string(out) != "from cwd\n" {
		t.Errorf("output %q", out)
	}
	if _, err := (terminal.Local{}).Start(context.Background(), terminal.Command{Command: "no-such-program-here", Dir: dir}); !errors.Is(err, acpclient.ErrProgramNotFound) {
		t.Errorf("missing program: %v", err)
	}
}
