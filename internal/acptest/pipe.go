package acptest

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"
)

// Pipe starts an agent for script on an in-memory connection and returns
// the client's end of it with the agent. Closing the client's end is the
// agent's end of input; the test's cleanup closes it and waits for the agent
// to stop.
func Pipe(t testing.TB, script Script) (io.ReadWriteCloser, *Agent) {
	t.Helper()
	a := NewAgent(script)
	return a.Pipe(t), a
}

// Pipe serves a on a new in-memory connection and returns the client's end,
// like the package-level Pipe. Set a's fields before calling it.
func (a *Agent) Pipe(t testing.TB) io.ReadWriteCloser {
	t.Helper()
	toAgent, fromClient := io.Pipe()
	toClient, fromAgent := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		err := a.Serve(ctx, toAgent, fromAgent)
		// The agent is gone: the client reads the end of its output.
		fromAgent.Close()
		toAgent.Close()
		done <- err
	}()
	client := &pipeEnd{r: toClient, w: fromClient}
	t.Cleanup(func() {
		client.Close()
		cancel()
		select {
		case err := <-done:
			var exit *ExitError
			if err != nil && !errors.As(err, &exit) && !errors.Is(err, context.Canceled) && !errors.Is(err, io.ErrClosedPipe) {
				t.Logf("acptest: fake agent stopped: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Errorf("acptest: fake agent did not stop within 10s of cleanup")
		}
	})
	return client
}

// pipeEnd is the client's end of an in-memory connection.
type pipeEnd struct {
	r *io.PipeReader
	w *io.PipeWriter
}

func (p *pipeEnd) Read(b []byte) (int, error)  { return p.r.Read(b) }
func (p *pipeEnd) Write(b []byte) (int, error) { return p.w.Write(b) }

// Close ends the agent's input and stops reading its output.
func (p *pipeEnd) Close() error {
	p.w.Close()
	p.r.Close()
	return nil
}
