package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestThreeDemoAgents(t *testing.T) {
	workspace := t.TempDir()
	var out bytes.Buffer
	if err := run([]string{"-n", "3", "-cwd", workspace, "Leave a note"}, &out); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	for _, name := range []string{"alpha", "beta", "gamma"} {
		if !strings.Contains(out.String(), name+strings.Repeat(" ", 8-len(name))+"│ [turn ended: end_turn]") {
			t.Errorf("no labelled end of %s's turn in:\n%s", name, out.String())
		}
		got, err := os.ReadFile(filepath.Join(workspace, name, "acprun-demo.txt"))
		if err != nil || !strings.Contains(string(got), "the "+name+" agent") {
			t.Errorf("%s's note: %q, %v", name, got, err)
		}
	}
}
