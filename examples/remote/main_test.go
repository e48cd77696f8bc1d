package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/acphost/acphost/acptest"
	"github.com/acphost/acphost/internal/sshtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The agent runs through an in-process SSH server and writes a file in the
// workspace over SFTP.
func TestRemoteWorkspace(t *testing.T) {
	server := sshtest.Start(t, nil)
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "remote.txt")
	script := acptest.WriteScript(t, acptest.Script{Prompts: []acptest.Turn{{Steps: []acptest.Step{
		{Text: "writing "},
		{WriteFile: &acptest.WriteFile{Path: file, Content: "written over SFTP\n"}},
	}}}})
	var out bytes.Buffer
	err = run([]string{
		"-agent", "'" + acptest.BuildBinary(t) + "' -script '" + script + "'",
		"-key", server.UserKeyFile, "-known-hosts", server.KnownHostsFile,
		"ssh://" + server.User + "@" + server.Addr + dir, "hello",
	}, &out)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "write "+file+": ok") || !strings.Contains(out.String(), "[turn ended: end_turn]") {
		t.Errorf("output:\n%s", out.String())
	}
	if got, err := os.ReadFile(file); err != nil || string(got) != "written over SFTP\n" {
		t.Errorf("remote.txt = %q, %v", got, err)
	}
}
