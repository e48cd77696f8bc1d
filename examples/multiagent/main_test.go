package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/acphost/acphost/acptest"
	"github.com/acphost/acphost/internal/fakebin"
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

// Without -cwd the demo agents work in a temporary directory, which is
// gone once they are done.
func TestDemoWorkspaceRemoved(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	var out bytes.Buffer
	if err := run([]string{"-n", "2", "Leave a note"}, &out); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "[tool completed: Write acprun-demo.txt]") {
		t.Errorf("the agents wrote no note:\n%s", out.String())
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("left in the temporary directory: %v", left)
	}
}

// Agent processes are labelled by the profile's title or by the name the
// agent gives in initialize, numbered when two share it, never by their
// program's name.
func TestLabelsFromProfileAndAgentInfo(t *testing.T) {
	bin := t.TempDir()
	fakebin.Install(t, bin, "claude-agent-acp", acptest.Script{Prompts: []acptest.Turn{{Steps: []acptest.Step{{Text: "from claude\n"}}}}}, "")
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	script := acptest.WriteScript(t, acptest.Script{
		Initialize: acptest.InitializeScript{AgentInfo: json.RawMessage(`{"name":"helper-agent","title":"Fake Helper","version":"1"}`)},
		Prompts:    []acptest.Turn{{Steps: []acptest.Step{{Text: "from the helper\n"}}}},
	})
	agent := fmt.Sprintf("'%s' -script '%s'", acptest.BuildBinary(t), script)
	var out bytes.Buffer
	if err := run([]string{"-cwd", t.TempDir(), "-provider", "claude", "-agent", agent, "-agent", agent, "hi"}, &out); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	for _, want := range []string{"Claude Code   │ from claude", "Fake Helper   │ from the helper", "Fake Helper 2 │ from the helper",
		"Claude Code   │ [turn ended: end_turn]", "Fake Helper 2 │ [turn ended: end_turn]"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "fakeagent") || strings.Contains(out.String(), "agent-") {
		t.Errorf("a program name or bridge id as a label:\n%s", out.String())
	}
}
