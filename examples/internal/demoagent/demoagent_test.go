package demoagent_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/bridge"
	"github.com/acphost/acphost/examples/internal/demoagent"
	"github.com/acphost/acphost/fsroot"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// turn runs one demo turn in a session whose cwd is dir, permissions
// allowed, and returns its events.
func turn(t *testing.T, b *bridge.Bridge, events <-chan bridge.Event, dir string) []bridge.Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	root, err := fsroot.NewLocal(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	s, err := b.OpenSession(ctx, bridge.SessionConfig{Cwd: root.Cwd(), Files: root, Policy: bridge.Policy{Mode: bridge.ModeFull}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)
	if _, err := s.Prompt(ctx, acpclient.TextBlock("leave a note")); err != nil {
		t.Fatal(err)
	}
	var got []bridge.Event
	for ev := range events {
		if ev.Key != s.Key() {
			continue
		}
		got = append(got, ev)
		if ev.Kind == bridge.KindTurnEnd {
			return got
		}
	}
	t.Fatal("the event stream ended")
	return nil
}

// The demo agent writes in the cwd of each session, not one fixed
// directory; a write the host refuses ends its tool call failed and its
// answer says so, instead of reporting it done.
func TestWritesInTheSessionsCwdAndOwnsARefusal(t *testing.T) {
	host := bridge.NewHost(nil)
	events := make(chan bridge.Event, 1024)
	go func() {
		defer close(events)
		for ev := range host.Events() {
			events <- ev
		}
	}()
	defer func() {
		host.Close()
		for range events {
		}
	}()
	b, err := host.Start(context.Background(), bridge.Config{ID: "demo", Transport: &demoagent.Transport{Name: "demo", Pace: time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	first, second := t.TempDir(), t.TempDir()
	for _, dir := range []string{first, second} {
		evs := turn(t, b, events, dir)
		if _, err := os.Stat(filepath.Join(dir, demoagent.FileName)); err != nil {
			t.Errorf("no note in the session's cwd %s: %v", dir, err)
		}
		if tool, _ := writeTool(evs); tool != "completed" {
			t.Errorf("the write in %s ended %q", dir, tool)
		}
	}

	refusing := t.TempDir()
	if err := os.Mkdir(filepath.Join(refusing, demoagent.FileName), 0o755); err != nil { // a file cannot be written over a directory
		t.Fatal(err)
	}
	evs := turn(t, b, events, refusing)
	tool, text := writeTool(evs)
	if tool != "failed" || !strings.Contains(text, "refused") || strings.Contains(text, "Done") {
		t.Errorf("a refused write: its tool ended %q, the agent said %q", tool, text)
	}
}

// writeTool returns how the write's tool call ended and the agent's text.
func writeTool(evs []bridge.Event) (status, text string) {
	for _, ev := range evs {
		switch {
		case ev.Kind == bridge.KindToolEnd && ev.Tool != nil && ev.Tool.ID == "call_write":
			status = string(ev.Tool.Status)
		case ev.Kind == bridge.KindText:
			text += ev.Text
		}
	}
	return status, text
}
