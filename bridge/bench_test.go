package bridge

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/acptest"
)

// BenchmarkHostFiftyAgents runs one Host with 50 fake agent processes, each
// streaming 2,000 text deltas in one turn, and reports the events delivered
// per second to the consumer and the peak heap in use while they flow.
func BenchmarkHostFiftyAgents(b *testing.B) {
	const agents, deltas = 50, 2000
	var steps []acptest.Step
	for i := range deltas {
		steps = append(steps, acptest.Step{Text: fmt.Sprintf("token %d ", i)})
	}
	bin := acptest.BuildBinary(b)
	script := acptest.WriteScript(b, acptest.Script{Prompts: []acptest.Turn{{Steps: steps}}})
	var peakHeap uint64
	var totalEvents int64
	var totalTime time.Duration
	for range b.N {
		h := NewHost(nil)
		var events atomic.Int64
		var text atomic.Int64
		consumed := make(chan struct{})
		go func() {
			defer close(consumed)
			for ev := range h.Events() {
				events.Add(1)
				if ev.Kind == KindText {
					text.Add(int64(len(ev.Text)))
				}
			}
		}()
		sessions := make([]*Session, agents)
		for i := range agents {
			br, err := h.Start(context.Background(), Config{ID: fmt.Sprintf("a%d", i),
				Transport: &acpclient.CommandTransport{Path: bin, Args: []string{"-script", script}}})
			if err != nil {
				b.Fatal(err)
			}
			if sessions[i], err = br.OpenSession(context.Background(), SessionConfig{Cwd: "/w"}); err != nil {
				b.Fatal(err)
			}
		}
		stopSampling := make(chan struct{})
		var sampler sync.WaitGroup
		sampler.Add(1)
		go func() {
			defer sampler.Done()
			var ms runtime.MemStats
			for {
				runtime.ReadMemStats(&ms)
				if ms.HeapInuse > peakHeap {
					peakHeap = ms.HeapInuse
				}
				select {
				case <-stopSampling:
					return
				case <-time.After(20 * time.Millisecond):
				}
			}
		}()
		before := events.Load()
		start := time.Now()
		var wg sync.WaitGroup
		for _, s := range sessions {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := s.Prompt(context.Background(), acpclient.TextBlock("go")); err != nil {
					b.Error(err)
				}
			}()
		}
		wg.Wait()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		h.Shutdown(ctx)
		cancel()
		<-consumed
		totalTime += time.Since(start)
		totalEvents += events.Load() - before
		close(stopSampling)
		sampler.Wait()
		wantText := int64(0)
		for i := range deltas {
			wantText += int64(len(fmt.Sprintf("token %d ", i)))
		}
		if got := text.Load(); got != wantText*agents {
			b.Fatalf("text delivered %d bytes, want %d: events lost", got, wantText*agents)
		}
	}
	b.ReportMetric(float64(totalEvents)/totalTime.Seconds(), "events/s")
	b.ReportMetric(float64(peakHeap)/(1<<20), "peak-heap-MiB")
	b.ReportMetric(float64(agents*deltas)/(totalTime.Seconds()/float64(b.N)), "deltas/s")
}
