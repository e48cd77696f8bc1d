package bridge

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/acptest"
)

// The crowd of BenchmarkHostCrowdMemory: crowdAgents fake agent processes,
// each streaming ACPHOST_BENCH_AGENT_KIB (default 2048) KiB of text in
// deltas of crowdDelta bytes in one turn.
const crowdAgents, crowdDelta = 200, 2 << 10

// BenchmarkHostCrowdMemory floods one Host with crowdAgents agent processes
// while its consumer is slow (it pauses a millisecond every 4 events),
// checks that every agent's text arrives whole, and reports the peak heap
// ("peak-heap-MiB", HeapInuse sampled every 10 ms, over the heap before the
// agents start) and the peak resident memory of the process ("peak-rss-MiB",
// VmHWM over VmRSS before the agents start; "hwm-MiB" is VmHWM itself).
func BenchmarkHostCrowdMemory(b *testing.B) {
	kib := 2048
	if v, err := strconv.Atoi(os.Getenv("ACPHOST_BENCH_AGENT_KIB")); err == nil && v > 0 {
		kib = v
	}
	deltas := kib << 10 / crowdDelta
	var steps []acptest.Step
	wantText := 0
	for i := range deltas {
		text := fmt.Sprintf("%06d ", i) + strings.Repeat("x", crowdDelta-7)
		steps = append(steps, acptest.Step{Text: text})
		wantText += len(text)
	}
	bin := acptest.BuildBinary(b)
	script := acptest.WriteScript(b, acptest.Script{Prompts: []acptest.Turn{{Steps: steps}}})
	var heap, rss, hwm float64
	for b.Loop() {
		r := crowdFlood(b, bin, script, wantText)
		heap, rss, hwm = max(heap, r.heap), max(rss, r.rss), max(hwm, r.hwm)
	}
	b.ReportMetric(heap, "peak-heap-MiB")
	b.ReportMetric(rss, "peak-rss-MiB")
	b.ReportMetric(hwm, "hwm-MiB")
}

// crowdPeak is what one crowd flood measured, in MiB.
type crowdPeak struct{ heap, rss, hwm float64 }

// crowdFlood runs the crowd on a new Host and shuts it down.
func crowdFlood(b *testing.B, bin, script string, wantText int) crowdPeak {
	runtime.GC()
	debug.FreeOSMemory()
	resetPeakRSS(b)
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	baseHeap, baseRSS := ms.HeapInuse, procStatusKiB(b, "VmRSS")
	h := NewHost(nil)
	text := map[string]int{}
	consumed := make(chan struct{})
	go func() {
		defer close(consumed)
		n := 0
		for ev := range h.Events() {
			if ev.Kind == KindText {
				text[ev.Bridge] += len(ev.Text)
			}
			if n++; n%4 == 0 {
				time.Sleep(time.Millisecond)
			}
		}
	}()
	var peakHeap uint64
	stop := make(chan struct{})
	var sampler sync.WaitGroup
	sampler.Add(1)
	go func() {
		defer sampler.Done()
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			peakHeap = max(peakHeap, ms.HeapInuse)
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	}()
	var wg sync.WaitGroup
	for i := range crowdAgents {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx := context.Background()
			br, err := h.Start(ctx, Config{ID: fmt.Sprintf("c%03d", i),
				Transport: &acpclient.CommandTransport{Path: bin, Args: []string{"-script", script}}})
			if err != nil {
				b.Error(err)
				return
			}
			s, err := br.OpenSession(ctx, SessionConfig{Cwd: "/w"})
			if err == nil {
				_, err = s.Prompt(ctx, acpclient.TextBlock("go"))
			}
			if err != nil {
				b.Error(err)
			}
		}()
	}
	wg.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	h.Shutdown(ctx)
	cancel()
	<-consumed
	close(stop)
	sampler.Wait()
	if len(text) != crowdAgents {
		b.Fatalf("text from %d agents, want %d", len(text), crowdAgents)
	}
	for id, n := range text {
		if n != wantText {
			b.Fatalf("agent %s delivered %d bytes of text, want %d: output lost", id, n, wantText)
		}
	}
	const mib = 1 << 20
	hwm := procStatusKiB(b, "VmHWM")
	return crowdPeak{heap: float64(peakHeap-min(peakHeap, baseHeap)) / mib,
		rss: float64(hwm-min(hwm, baseRSS)) / 1024, hwm: float64(hwm) / 1024}
}

// resetPeakRSS makes VmHWM start again from the current resident set.
func resetPeakRSS(b *testing.B) {
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		b.Skipf("cannot reset the peak RSS: %v", err)
	}
}

// procStatusKiB returns a KiB field of /proc/self/status.
func procStatusKiB(b *testing.B, field string) uint64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		b.Skipf("no /proc/self/status: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			n, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				b.Fatal(err)
			}
			return n
		}
	}
	b.Fatalf("no %s in /proc/self/status", field)
	return 0
}
