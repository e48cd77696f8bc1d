package bridge

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/acptest"
	"github.com/acphost/acphost/bridge/terminal"
	"github.com/acphost/acphost/checkpoint"
	"github.com/acphost/acphost/internal/sshdtest"
	"github.com/acphost/acphost/internal/waitfor"
)

// sshLiveSession is a session of an agent launched over a real sshd whose
// turn writes remote.txt and waits for cancel; startup is the login's
// shell startup.
func sshLiveSession(t *testing.T, startup string) (*Session, *recorder, func()) {
	t.Helper()
	srv := sshdtest.Start(t)
	if startup != "" {
		srv.SetStartup(t, startup)
	}
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	script := acptest.WriteScript(t, acptest.Script{Prompts: []acptest.Turn{{Steps: []acptest.Step{
		{Terminal: &acptest.Terminal{Command: "sh", Args: []string{"-c", "printf 'remote\\n' > remote.txt"}, Cwd: dir}},
		{WaitCancel: true},
	}}}})
	tr := &acpclient.SSHTransport{Client: srv.Dial(t), Path: acptest.BuildBinary(t), Args: []string{"-script", script}}
	h, rec := newHostAndRecorder(t, nil)
	b, err := h.Start(context.Background(), Config{ID: "remote-live", Transport: tr, Terminals: &terminal.Options{}})
	if err != nil {
		t.Fatal(err)
	}
	s, err := b.OpenSession(waitfor.Context(t), SessionConfig{Cwd: dir, Policy: Policy{Mode: ModeBuild}, Checkpoints: &checkpoint.Options{}})
	if err != nil {
		t.Fatal(err)
	}
	return s, rec, runLive(t, s)
}

// TestLiveOnTheSSHHost: for an agent launched over SSH, the files a
// command changes on that host are reported live, through inotifywait
// there.
func TestLiveOnTheSSHHost(t *testing.T) {
	if _, err := exec.LookPath("inotifywait"); err != nil {
		t.Skip("inotifywait (inotify-tools) is not installed on this host")
	}
	_, rec, cancel := sshLiveSession(t, "")
	waitfor.Until(t, "a touch event naming remote.txt while the turn runs", func() bool {
		files, _ := touched(rec)
		return files["remote.txt"] == "A"
	})
	cancel()
	end := rec.waitFor("the turn's changes", func(ev Event) bool { return ev.Kind == KindChanges && ev.Changes.Op == "turn" })
	if len(end.Changes.Files) != 1 || end.Changes.Files[0].Path != "remote.txt" {
		t.Errorf("the turn's changes = %+v", end.Changes.Files)
	}
}

// TestLiveOnAnSSHHostWithoutInotifywait: a host without inotifywait gets
// one touch event saying there are no live reports, and the turn's event
// lists the files.
func TestLiveOnAnSSHHostWithoutInotifywait(t *testing.T) {
	// The login's PATH finds a program named inotifywait that answers as a
	// shell does for a program it cannot find.
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "inotifywait"), []byte("#!/bin/sh\nexit 127\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, rec, cancel := sshLiveSession(t, "PATH="+bin+":$PATH; export PATH\n")
	rec.waitFor("the command's end", func(ev Event) bool {
		return ev.Kind == KindText && strings.HasPrefix(ev.Text, "terminal: exit")
	})
	cancel()
	end := rec.waitFor("the turn's changes", func(ev Event) bool { return ev.Kind == KindChanges && ev.Changes.Op == "turn" })
	files, why := touched(rec)
	if len(files) != 0 || len(why) != 1 || !strings.Contains(why[0], "executable file not found") {
		t.Errorf("touch events without inotifywait: files %v, skipped %q", files, why)
	}
	if len(end.Changes.Files) != 1 || end.Changes.Files[0].Path != "remote.txt" {
		t.Errorf("the turn's changes = %+v", end.Changes.Files)
	}
}
