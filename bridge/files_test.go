package bridge

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/acptest"
	"github.com/acphost/acphost/fsroot"
	"github.com/acphost/acphost/internal/waitfor"
)

// TestLocalRootServesTheAgent wires an fsroot.Local root into a session:
// reads and writes inside the workspace work, a path outside is refused
// with a message naming it, a missing file is -32002, and a refused write
// leaves the old content intact.
func TestLocalRootServesTheAgent(t *testing.T) {
	dir := t.TempDir()
	outside := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("one\r\ntwo\r\nthree\r\n"), 0o644)
	os.WriteFile(filepath.Join(outside, "secret"), []byte("s3cret"), 0o600)
	os.Symlink(filepath.Join(outside, "secret"), filepath.Join(dir, "link"))
	script := acptest.Script{Prompts: []acptest.Turn{{Steps: []acptest.Step{
		{ReadFile: &acptest.ReadFile{Path: filepath.Join(dir, "a.txt"), Line: 2, Limit: 1}},
		{ReadFile: &acptest.ReadFile{Path: filepath.Join(dir, "link")}},
		{ReadFile: &acptest.ReadFile{Path: filepath.Join(dir, "../", filepath.Base(outside), "secret")}},
		{ReadFile: &acptest.ReadFile{Path: filepath.Join(dir, "nope.txt")}},
		{WriteFile: &acptest.WriteFile{Path: filepath.Join(dir, "sub", "new.txt"), Content: "created\n"}},
	}}}}
	answers := fileTurnAnswers(t, "files", dir, script)
	if len(answers) != 5 {
		t.Fatalf("answers %q", answers)
	}
	if !strings.HasSuffix(answers[0], ": two\r\n") {
		t.Errorf("line slice: %q", answers[0])
	}
	for i, want := range []string{"outside", "outside"} {
		a := answers[i+1]
		if !strings.Contains(a, "error -32603") || !strings.Contains(a, want) || strings.Contains(a, "s3cret") {
			t.Errorf("escape attempt %d answered %q", i, a)
		}
	}
	if !strings.Contains(answers[3], "error -32002") || !strings.Contains(answers[3], "nope.txt") {
		t.Errorf("missing file answered %q", answers[3])
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "sub", "new.txt")); string(got) != "created\n" {
		t.Errorf("new file = %q (%s)", got, answers[4])
	}
}

// TestFileThatIsNotUTF8IsRefusedToTheAgent checks, through a real agent
// process, that a file with bytes that are not UTF-8 is answered with a
// JSON-RPC error naming the file and the offset, never with U+FFFD text,
// while a BOM and CRLF reach the agent intact.
func TestFileThatIsNotUTF8IsRefusedToTheAgent(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "latin1.txt"), []byte("caf\xe9\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "bom.txt"), []byte("\ufeffone\r\n"), 0o644)
	script := acptest.Script{Prompts: []acptest.Turn{{Steps: []acptest.Step{
		{ReadFile: &acptest.ReadFile{Path: filepath.Join(dir, "latin1.txt")}},
		{ReadFile: &acptest.ReadFile{Path: filepath.Join(dir, "bom.txt")}},
	}}}}
	answers := fileTurnAnswers(t, "utf8", dir, script)
	if len(answers) != 2 {
		t.Fatalf("answers %q", answers)
	}
	if a := answers[0]; !strings.Contains(a, "error -32603") || !strings.Contains(a, "latin1.txt") ||
		!strings.Contains(a, "not UTF-8") || !strings.Contains(a, "offset 3") || strings.Contains(a, "\ufffd") {
		t.Errorf("non-UTF-8 file answered %q", a)
	}
	if !strings.HasSuffix(answers[1], ": \ufeffone\r\n") {
		t.Errorf("BOM and CRLF answered %q", answers[1])
	}
}

// fileTurnAnswers runs one turn of script against a Local root on dir and
// returns the agent's reports of its file calls, in order.
func fileTurnAnswers(t *testing.T, id, dir string, script acptest.Script) []string {
	t.Helper()
	root, err := fsroot.NewLocal(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	h, rec := newHostAndRecorder(t, nil)
	b, err := h.Start(context.Background(), agentConfig(t, id, script))
	if err != nil {
		t.Fatal(err)
	}
	s, err := b.OpenSession(waitfor.Context(t), SessionConfig{Cwd: dir, Files: root})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Prompt(waitfor.Context(t), acpclient.TextBlock("go")); err != nil {
		t.Fatal(err)
	}
	rec.waitFor("turn end", func(ev Event) bool { return ev.Kind == KindTurnEnd })
	var answers []string
	for _, ev := range rec.of(id, s.ID()) {
		if ev.Kind == KindText {
			answers = append(answers, ev.Text)
		}
	}
	return answers
}
