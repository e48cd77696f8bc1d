package bridge

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/acptest"
)

// localTransport is an in-process fake agent that says it is a program
// on this machine, as a command's transport does.
type localTransport struct{ inner *acptest.Transport }

func (t *localTransport) Connect(ctx context.Context) (io.ReadWriteCloser, error) {
	return t.inner.Connect(ctx)
}

func (t *localTransport) Program() (string, []string, []string) {
	return "/usr/bin/fake-agent", nil, nil
}

var _ acpclient.ProgramTransport = (*localTransport)(nil)

// writeScript writes note.txt in the session's cwd and reads it back.
func writeScript() acptest.Script {
	return acptest.Script{Prompts: []acptest.Turn{{Steps: []acptest.Step{
		{WriteFile: &acptest.WriteFile{Path: acptest.CwdToken + "/note.txt", Content: "hi"}},
		{ReadFile: &acptest.ReadFile{Path: acptest.CwdToken + "/note.txt"}},
		{ReadFile: &acptest.ReadFile{Path: "/etc/hostname"}},
	}}}}
}

// A local agent's session without Files gets a root confined to its Cwd:
// the agent's writes land there, and a path outside it is refused.
func TestLocalSessionWithoutFilesGetsItsCwd(t *testing.T) {
	cwd := t.TempDir()
	h, rec := newHostAndRecorder(t, nil)
	b, err := h.Start(ctxT(t), Config{ID: "lf", Transport: &localTransport{&acptest.Transport{Script: writeScript()}}})
	if err != nil {
		t.Fatal(err)
	}
	s, err := b.OpenSession(ctxT(t), SessionConfig{Cwd: cwd, Policy: Policy{Mode: ModeFull}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Prompt(ctxT(t), acpclient.TextBlock("go")); err != nil {
		t.Fatal(err)
	}
	rec.waitFor("the turn's end", func(ev Event) bool { return ev.Kind == KindTurnEnd })
	if got, err := os.ReadFile(filepath.Join(cwd, "note.txt")); err != nil || string(got) != "hi" {
		t.Errorf("note.txt in the cwd: %q, %v; want the agent's write", got, err)
	}
	text := ""
	for _, ev := range rec.of("lf", s.ID()) {
		text += ev.Text
	}
	if !strings.Contains(text, "note.txt: ok") || strings.Contains(text, "/etc/hostname: ok") {
		t.Errorf("the agent's reports %q: want its cwd served and /etc refused", text)
	}
	if err := s.Close(ctxT(t)); err != nil {
		t.Fatal(err)
	}
}

// A local session whose Cwd cannot be a root has its file calls refused,
// and the first refusal says why.
func TestLocalSessionWithoutFilesNeedsARealCwd(t *testing.T) {
	h, rec := newHostAndRecorder(t, nil)
	b, err := h.Start(ctxT(t), Config{ID: "lf", Transport: &localTransport{&acptest.Transport{Script: writeScript()}}})
	if err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(t.TempDir(), "gone")
	s, err := b.OpenSession(ctxT(t), SessionConfig{Cwd: missing, Policy: Policy{Mode: ModeFull}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Prompt(ctxT(t), acpclient.TextBlock("go")); err != nil {
		t.Fatal(err)
	}
	rec.waitFor("an error event saying why the file calls are refused", func(ev Event) bool {
		return ev.Kind == KindError && ev.Err != nil && strings.Contains(ev.Err.Error(), "its Cwd cannot be one")
	})
	if _, err := os.Stat(missing); err == nil {
		t.Error("the refused write created the missing directory")
	}
}

// Any other agent without Files has its file calls refused, and the app
// is told once, with how to fix it.
func TestRefusedFileCallsAreReported(t *testing.T) {
	h, rec := newHostAndRecorder(t, nil)
	b, err := h.Start(ctxT(t), Config{ID: "rf", Transport: &acptest.Transport{Script: writeScript()}})
	if err != nil {
		t.Fatal(err)
	}
	s, err := b.OpenSession(ctxT(t), SessionConfig{Cwd: t.TempDir(), Policy: Policy{Mode: ModeFull}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Prompt(ctxT(t), acpclient.TextBlock("go")); err != nil {
		t.Fatal(err)
	}
	rec.waitFor("the turn's end", func(ev Event) bool { return ev.Kind == KindTurnEnd })
	n := 0
	for _, ev := range rec.of("rf", s.ID()) {
		if ev.Kind == KindError && ev.Err != nil && strings.Contains(ev.Err.Error(), "SessionConfig.Files") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d error events name the missing Files, want 1:\n%s", n, rec.summary())
	}
}
