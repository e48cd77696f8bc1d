package bridge

import (
	"context"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/acptest"
	"github.com/acphost/acphost/internal/waitfor"
)

// slowStop is a transport whose streams can be ended from the agent's side
// (end closes its output, as an agent closing stdout does) and take until
// release to close, like a process still being stopped (grace, SIGTERM,
// SIGKILL): the connection has ended, but Done has not closed.
type slowStop struct {
	inner   acpclient.Transport
	end     chan struct{}
	release chan struct{}
}

func (t *slowStop) Connect(ctx context.Context) (io.ReadWriteCloser, error) {
	rwc, err := t.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	pr, pw := io.Pipe()
	go func() {
		_, err := io.Copy(pw, rwc)
		pw.CloseWithError(err)
	}()
	c := &slowClose{inner: rwc, out: pr, release: t.release}
	if t.end != nil {
		end := t.end
		t.end = nil // only the first agent's output is cut
		go func() {
			<-end
			pw.Close()
		}()
	}
	return c, nil
}

type slowClose struct {
	inner   io.ReadWriteCloser
	out     *io.PipeReader
	release chan struct{}
}

func (c *slowClose) Read(p []byte) (int, error)  { return c.out.Read(p) }
func (c *slowClose) Write(p []byte) (int, error) { return c.inner.Write(p) }

func (c *slowClose) Close() error {
	<-c.release
	c.out.Close()
	return c.inner.Close()
}

// A prompt made after the agent's output ended, while its process is still
// being stopped, waits for it to be gone and runs on a new agent; it never
// gets the dead connection.
func TestPromptAfterTheAgentEndedWaitsForTheStop(t *testing.T) {
	inner := &acptest.Transport{Script: acptest.Script{
		NewSession:  acptest.NewSessionScript{SessionIDs: []string{"sess_R"}},
		LoadSession: acptest.LoadSessionScript{Sessions: []string{"sess_R"}},
		Prompts:     []acptest.Turn{{Steps: []acptest.Step{{Text: "fresh"}}}},
	}}
	end := make(chan struct{})
	tr := &slowStop{inner: inner, end: end, release: make(chan struct{})}
	releaseOnce := sync.OnceFunc(func() { close(tr.release) })
	h, _ := newHostAndRecorder(t, nil)
	t.Cleanup(releaseOnce) // runs before the host's cleanup, which closes the agents
	b, err := h.Start(ctxT(t), Config{ID: "r", Transport: tr})
	if err != nil {
		t.Fatal(err)
	}
	s, err := b.OpenSession(ctxT(t), SessionConfig{Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	close(end)
	for deadline := time.Now().Add(5 * time.Second); b.Running(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the bridge still reports its agent running after its output ended")
		}
	}
	if b.InitializeResponse() != nil {
		t.Error("the ended agent's initialize answer is still reported as the running one's")
	}
	type result struct {
		stop string
		err  error
	}
	done := make(chan result, 1)
	go func() {
		stop, err := s.Prompt(ctxT(t), acpclient.TextBlock("again"))
		done <- result{stop, err}
	}()
	// Give a prompt that would take the dead connection the time to get it.
	select {
	case r := <-done:
		t.Fatalf("the prompt returned while the old agent was still stopping: %q %v", r.stop, r.err)
	case <-time.After(50 * time.Millisecond):
	}
	releaseOnce()
	if r := waitfor.Recv(t, done, "the call to return"); r.err != nil || r.stop != acpclient.StopEndTurn {
		t.Fatalf("prompt after the agent ended: %q %v", r.stop, r.err)
	}
	if n := len(inner.Agents()); n != 2 {
		t.Errorf("%d agents started, want the first and its successor", n)
	}
}
