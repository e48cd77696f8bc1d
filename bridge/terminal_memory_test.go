package bridge

import (
	"context"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/acptest"
	"github.com/acphost/acphost/bridge/terminal"
	"github.com/acphost/acphost/internal/waitfor"
)

// heapPeak samples the heap in use until stop is called, which returns the
// peak seen.
func heapPeak() (stop func() uint64) {
	var (
		peak uint64
		wg   sync.WaitGroup
	)
	done := make(chan struct{})
	sample := func() {
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		peak = max(peak, m.HeapInuse)
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			sample()
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	return func() uint64 {
		close(done)
		wg.Wait()
		sample()
		return peak
	}
}

// TestTerminalMemoryBounded: a command that prints 1 GiB with an
// outputByteLimit of 1 MiB costs the host a bounded amount of memory (the
// window, and live events of bounded size however fast the consumer), and
// terminal/output has the last MiB. Under the race detector, which makes
// every copy slow, it prints 256 MiB: still 256 times the window.
func TestTerminalMemoryBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("pipes 1 GiB")
	}
	size := "1073741824"
	if raceEnabled {
		size = "268435456"
	}
	script := acptest.Script{Prompts: []acptest.Turn{
		{Match: "run", Steps: []acptest.Step{
			termRequest("terminal/create", map[string]any{"command": "sh", "args": []string{"-c", "yes 0123456789abcde | head -c " + size}, "outputByteLimit": 1 << 20}),
			onTerminal("terminal/wait_for_exit", "term-1"),
		}},
		// Reporting 1 MiB through the fake agent costs several MiB of
		// JSON: that is left out of the measure.
		{Match: "output", Steps: []acptest.Step{onTerminal("terminal/output", "term-1")}},
	}}
	h := NewHost(nil)
	var (
		mu      sync.Mutex
		output  string
		live    int64
		drained = make(chan struct{})
		got     = make(chan struct{}) // closed once output is set
	)
	go func() { // keeps only what the test checks
		defer close(drained)
		for ev := range h.Events() {
			mu.Lock()
			if ev.Kind == KindTerminal {
				live += int64(len(ev.Terminal.Data))
			}
			if ev.Kind == KindText && strings.HasPrefix(ev.Text, "request terminal/output:") {
				output = ev.Text
				close(got)
			}
			mu.Unlock()
		}
	}()
	defer func() { h.Shutdown(context.Background()); <-drained }()
	b, err := h.Start(context.Background(), Config{ID: "big", Transport: &acptest.Transport{Script: script}, Terminals: &terminal.Options{}})
	if err != nil {
		t.Fatal(err)
	}
	s, err := b.OpenSession(waitfor.Context(t), SessionConfig{Cwd: t.TempDir(), Policy: Policy{Mode: ModeBuild}})
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	stop := heapPeak()
	start := time.Now()
	if _, err := s.Prompt(waitfor.Context(t), acpclient.TextBlock("run")); err != nil {
		t.Fatal(err)
	}
	peak := stop()
	t.Logf("ran in %v", time.Since(start))
	if _, err := s.Prompt(waitfor.Context(t), acpclient.TextBlock("output")); err != nil {
		t.Fatal(err)
	}
	if grown := int64(peak) - int64(before.HeapInuse); grown > 32<<20 {
		t.Errorf("heap in use grew by %d MiB while the command printed %s bytes", grown>>20, size)
	}
	s.Close(context.Background())
	// The events reach this test's consumer on their own time: the turn's
	// end does not wait for it.
	select {
	case <-got:
	case <-time.After(30 * time.Second):
		t.Fatal("the terminal/output report never reached the event consumer")
	}
	mu.Lock()
	defer mu.Unlock()
	// The output is the last MiB: lines of 16 bytes, the first one cut.
	prefix := `request terminal/output: result {"output":"`
	want := strings.Repeat(`0123456789abcde\n`, 1<<16) + `","truncated":true,"exitStatus":{"exitCode":0}}`
	if output != prefix+want {
		t.Errorf("terminal/output: %d bytes ending %q, want the last MiB of the lines", len(output), output[max(0, len(output)-80):])
	}
	t.Logf("heap peak %d MiB above the start (%d MiB in use); live events carried %d MiB", (int64(peak)-int64(before.HeapInuse))>>20, before.HeapInuse>>20, live>>20)
}
