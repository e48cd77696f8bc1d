package bridge

import (
	"runtime"
	"testing"
	"time"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/acptest"
)

// idleBridgeGoroutines is what an idle bridge over a local process costs:
// the connection's reader, its dispatcher (which also waits for the end),
// the process's reaper, stderr drain and sentinel reaper, and the bridge's
// exit watcher. Sampling the process tree runs on a timer.
const idleBridgeGoroutines = 6

// An idle bridge with a session open holds no more goroutines than
// idleBridgeGoroutines, and none once closed.
func TestIdleBridgeGoroutines(t *testing.T) {
	bin := acptest.BuildBinary(t)
	script := acptest.WriteScript(t, acptest.Script{})
	h, _ := newHostAndRecorder(t, nil)
	start := func() *Bridge {
		b, err := h.Start(ctxT(t), Config{Transport: &acpclient.CommandTransport{Path: bin, Args: []string{"-script", script}}})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	first := start() // process-wide helpers run while an agent does: counted before
	defer first.Close()
	before := runtime.NumGoroutine()
	b := start()
	if _, err := b.OpenSession(ctxT(t), SessionConfig{Cwd: "/w"}); err != nil {
		t.Fatal(err)
	}
	// Goroutines of the handshake end soon after it: wait for the count to
	// come down to the bound, or report the lowest seen.
	lowest := runtime.NumGoroutine() - before
	for deadline := time.Now().Add(10 * time.Second); lowest > idleBridgeGoroutines && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
		lowest = min(lowest, runtime.NumGoroutine()-before)
	}
	if lowest > idleBridgeGoroutines {
		buf := make([]byte, 1<<20)
		t.Fatalf("an idle bridge holds %d goroutines, want at most %d:\n%s", lowest, idleBridgeGoroutines, buf[:runtime.Stack(buf, true)])
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
}
