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

// The flood of the benchmarks: 50 fake agent processes, each streaming
// 2,000 text deltas in one turn.
const floodAgents, floodDeltas = 50, 2000

// floodResult is what one flood measured.
type floodResult struct {
	events   int64         // delivered on Events during the flood
	total    int64         // delivered on Events in all
	elapsed  time.Duration // from the prompts to the last event delivered
	peakHeap uint64
	host     *Host // shut down
}

// BenchmarkHostFiftyAgents runs one Host with the flood and reports the
// events delivered per second to the consumer and the peak heap in use
// while they flow.
func BenchmarkHostFiftyAgents(b *testing.B) {
	bin, script := floodScript(b)
	var peakHeap uint64
	var totalEvents int64
	var totalTime time.Duration
	for range b.N {
		r := flood(b, bin, script, nil, 0)
		totalEvents += r.events
		totalTime += r.elapsed
		peakHeap = max(peakHeap, r.peakHeap)
	}
	b.ReportMetric(float64(totalEvents)/totalTime.Seconds(), "events/s")
	b.ReportMetric(float64(peakHeap)/(1<<20), "peak-heap-MiB")
	b.ReportMetric(float64(floodAgents*floodDeltas)/(totalTime.Seconds()/float64(b.N)), "deltas/s")
}

// BenchmarkHostSubscribers runs the flood without subscribers, with 1 and
// with 8 subscribers reading live, and with an in-memory journal after
// which one subscriber catches up from the start. It reports the events/s
// (merging makes their count vary) and the deltas/s (fixed work) of each as
// a ratio of the flood without subscribers, in this process, and the
// catch-up's events/s as a ratio of the flood's.
func BenchmarkHostSubscribers(b *testing.B) {
	bin, script := floodScript(b)
	type totals struct {
		events int64
		time   time.Duration
	}
	var base, live1, live8, journaled, catchUp totals
	add := func(t *totals, r floodResult) { t.events, t.time = t.events+r.events, t.time+r.elapsed }
	flood(b, bin, script, nil, 0) // the first flood of a process is slower: warm up
	b.ResetTimer()
	for range b.N {
		add(&base, flood(b, bin, script, nil, 0))
		add(&live1, flood(b, bin, script, nil, 1))
		add(&live8, flood(b, bin, script, nil, 8))
		r := flood(b, bin, script, &HostOptions{Journal: newMemJournal()}, 0)
		add(&journaled, r)
		start := time.Now()
		var read int64
		for _, err := range r.host.Subscribe(context.Background(), Cursor{}) {
			if err != nil {
				b.Fatal(err)
			}
			read++
		}
		if read != r.total {
			b.Fatalf("catch-up read %d events, %d were delivered", read, r.total)
		}
		catchUp.events, catchUp.time = catchUp.events+read, catchUp.time+time.Since(start)
	}
	eventRate := func(t totals) float64 { return float64(t.events) / t.time.Seconds() }
	b.ReportMetric(eventRate(base), "events/s")
	b.ReportMetric(float64(b.N*floodAgents*floodDeltas)/base.time.Seconds(), "deltas/s")
	for _, v := range []struct {
		name string
		t    totals
	}{{"live1", live1}, {"live8", live8}, {"memjournal", journaled}} {
		b.ReportMetric(eventRate(v.t)/eventRate(base), v.name+"-events-ratio")
		b.ReportMetric(base.time.Seconds()/v.t.time.Seconds(), v.name+"-deltas-ratio")
	}
	b.ReportMetric(eventRate(catchUp)/eventRate(base), "catchup-events-ratio")
	b.ReportMetric(eventRate(catchUp), "catchup-events/s")
}

func floodScript(b *testing.B) (bin, script string) {
	var steps []acptest.Step
	for i := range floodDeltas {
		steps = append(steps, acptest.Step{Text: fmt.Sprintf("token %d ", i)})
	}
	return acptest.BuildBinary(b), acptest.WriteScript(b, acptest.Script{Prompts: []acptest.Turn{{Steps: steps}}})
}

// flood runs the flood on a new Host with subscribers reading live, checks
// that nothing was lost on Events nor by a subscriber, and shuts it down.
func flood(b *testing.B, bin, script string, opts *HostOptions, subscribers int) floodResult {
	h := NewHost(opts)
	var events, text atomic.Int64
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
	subscribed := make([]int64, subscribers)
	var subs sync.WaitGroup
	for i := range subscribers {
		subs.Add(1)
		go func() {
			defer subs.Done()
			for _, err := range h.Subscribe(context.Background(), Cursor{}) {
				if err != nil {
					b.Error(err)
					return
				}
				subscribed[i]++
			}
		}()
	}
	sessions := make([]*Session, floodAgents)
	for i := range floodAgents {
		br, err := h.Start(context.Background(), Config{ID: fmt.Sprintf("a%d", i),
			Transport: &acpclient.CommandTransport{Path: bin, Args: []string{"-script", script}}})
		if err != nil {
			b.Fatal(err)
		}
		if sessions[i], err = br.OpenSession(context.Background(), SessionConfig{Cwd: "/w"}); err != nil {
			b.Fatal(err)
		}
	}
	r := floodResult{host: h}
	stopSampling := make(chan struct{})
	var sampler sync.WaitGroup
	sampler.Add(1)
	go func() {
		defer sampler.Done()
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			r.peakHeap = max(r.peakHeap, ms.HeapInuse)
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
	r.elapsed = time.Since(start)
	r.events, r.total = events.Load()-before, events.Load()
	close(stopSampling)
	sampler.Wait()
	subs.Wait()
	wantText := int64(0)
	for i := range floodDeltas {
		wantText += int64(len(fmt.Sprintf("token %d ", i)))
	}
	if got := text.Load(); got != wantText*floodAgents {
		b.Fatalf("text delivered %d bytes, want %d: events lost", got, wantText*floodAgents)
	}
	for i, n := range subscribed {
		if n != events.Load() {
			b.Fatalf("subscriber %d read %d events, %d were delivered", i, n, events.Load())
		}
	}
	return r
}
