package main

import (
	"context"
	"errors"
	"time"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/bridge"
)

// noteExit records how an agent's process ended, from its exited event:
// the event's Err is set when it died of a failure (a non-zero status, a
// signal, a broken stream), nil when it ended cleanly or was closed.
func (s *server) noteExit(ev bridge.Event) {
	a, err := s.agentNamed(ev.Bridge)
	if err != nil {
		return
	}
	a.mu.Lock()
	a.exit, a.ended = ev.Err, true
	a.mu.Unlock()
}

// awaitExit waits, for up to wait, until the exited event of the agent's
// ended process has been read: the bridge stops running a moment before
// its event comes, and until then a crash would look like a clean stop.
func (a *agent) awaitExit(ctx context.Context, wait time.Duration) {
	waitFor(ctx, wait, func() *bool {
		a.mu.Lock()
		defer a.mu.Unlock()
		if a.ended {
			return &a.ended
		}
		return nil
	})
}

// exitText is how a crashed process ended, as the page shows it.
func exitText(err error) string {
	if ee, ok := errors.AsType[*acpclient.ExitError](err); ok {
		if ee.Err != nil {
			return ee.Err.Error()
		}
		return "exit status 0"
	}
	return err.Error()
}

// exitStderr is the end of a crashed process's standard error, when the
// error quotes it.
func exitStderr(err error) string {
	if ee, ok := errors.AsType[*acpclient.ExitError](err); ok {
		return ee.Stderr
	}
	return ""
}
