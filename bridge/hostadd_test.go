package bridge

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/acptest"
	"github.com/acphost/acphost/checkpoint"
	"github.com/acphost/acphost/internal/waitfor"
)

// gatedTransport is an agent whose start waits until gate is closed, as a
// slow agent's start does.
type gatedTransport struct {
	inner acpclient.Transport
	gate  chan struct{}
}

func (t *gatedTransport) Connect(ctx context.Context) (io.ReadWriteCloser, error) {
	select {
	case <-t.gate:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return t.inner.Connect(ctx)
}

// An agent added to a Host does not run until a session opens on it; the
// new session's first checkpoint is recorded while the agent starts, not
// after it; and the session is opened on the agent that start started.
func TestAddedAgentStartsWithItsFirstSession(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h, _ := newHostAndRecorder(t, nil)
	gate := make(chan struct{})
	b, err := h.Add(Config{ID: "added", Transport: &gatedTransport{inner: &acptest.Transport{}, gate: gate}})
	if err != nil {
		t.Fatal(err)
	}
	if b.Running() || b.InitializeResponse() != nil {
		t.Fatal("an added agent runs before anything needs it")
	}
	if got, ok := h.Bridge("added"); !ok || got != b {
		t.Fatal("the Host does not know the added agent")
	}
	ckpt := filepath.Join(t.TempDir(), "checkpoints")
	type opened struct {
		s   *Session
		err error
	}
	done := make(chan opened, 1)
	go func() {
		s, err := b.OpenSession(waitfor.Context(t), SessionConfig{Cwd: dir, Policy: Policy{Mode: ModeBuild},
			Checkpoints: &checkpoint.Options{Dir: ckpt}})
		done <- opened{s, err}
	}()
	waitfor.Until(t, "the session's first checkpoint, recorded while its agent starts", func() bool {
		_, err := os.Stat(filepath.Join(ckpt, "refs", "acphost", prepareCheckpoint))
		return err == nil
	})
	if b.Running() {
		t.Fatal("the agent runs before its start was let through")
	}
	close(gate)
	o := waitfor.Recv(t, done, "the session's opening")
	if o.err != nil {
		t.Fatal(o.err)
	}
	if !b.Running() || b.InitializeResponse() == nil {
		t.Error("the session opened, yet its agent is not running and initialized")
	}
	if err := o.s.Close(waitfor.Context(t)); err != nil {
		t.Fatal(err)
	}
}

// An added agent that cannot start fails the call that starts it, with the
// start's error, and stays added: a later call tries again.
func TestAddedAgentThatCannotStart(t *testing.T) {
	h, _ := newHostAndRecorder(t, nil)
	tr := &acpclient.CommandTransport{Path: filepath.Join(t.TempDir(), "no-such-agent")}
	b, err := h.Add(Config{ID: "missing", Transport: tr})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := b.OpenSession(waitfor.Context(t), SessionConfig{Cwd: t.TempDir()}); !errors.Is(err, acpclient.ErrAgentNotFound) {
			t.Fatalf("OpenSession on an agent that is not installed = %v, want ErrAgentNotFound", err)
		}
		if _, ok := h.Bridge("missing"); !ok {
			t.Fatal("a failed start removed the added agent")
		}
	}
	// Start, by contrast, adds nothing when the start fails.
	if _, err := h.Start(waitfor.Context(t), Config{ID: "started", Transport: tr}); !errors.Is(err, acpclient.ErrAgentNotFound) {
		t.Fatalf("Start = %v, want ErrAgentNotFound", err)
	}
	if _, ok := h.Bridge("started"); ok {
		t.Error("a failed Start left its agent added")
	}
}

// Add refuses a Config without a transport, an id taken, and a Host that
// shut down.
func TestAddRefused(t *testing.T) {
	h := NewHost(nil)
	if _, err := h.Add(Config{ID: "x"}); err == nil {
		t.Error("Add without a transport succeeded")
	}
	if _, err := h.Add(Config{ID: "x", Transport: &acptest.Transport{}}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Add(Config{ID: "x", Transport: &acptest.Transport{}}); err == nil {
		t.Error("Add with an id taken succeeded")
	}
	if err := h.Shutdown(waitfor.Context(t)); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Add(Config{Transport: &acptest.Transport{}}); !errors.Is(err, ErrClosed) {
		t.Errorf("Add after Shutdown = %v, want ErrClosed", err)
	}
}
