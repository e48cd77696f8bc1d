package sshconn

import (
	"context"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// ctx is the context of operations that are not about cancellation.
var ctx = context.Background()

// manualTicker is a keepalive ticker the test drives; an unbuffered send
// returns only when the keepalive loop takes the tick.
type manualTicker chan time.Time

func (m manualTicker) newTicker(time.Duration) (<-chan time.Time, func()) { return m, func() {} }

func (m manualTicker) tick(t *testing.T) {
	t.Helper()
	select {
	case m <- time.Now():
	case <-time.After(10 * time.Second):
		t.Fatal("keepalive loop did not take the tick")
	}
}
