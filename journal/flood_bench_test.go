package journal_test

import (
	"context"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/bridge"
	"github.com/acphost/acphost/internal/floodagent"
	"github.com/acphost/acphost/journal"
)

// floodChunks is the size of the flood.
const floodChunks = 200_000

// BenchmarkHostFloodJournal floods one Host with 200k text chunks (and a
// tool call every 100) with the journal off and on, interleaved in each
// iteration, and reports the agent messages per second of each, their
// ratio (on/off; the issue asks for at least 0.5) and the peak heap with
// the journal on.
func BenchmarkHostFloodJournal(b *testing.B) {
	var off, on time.Duration
	var peak uint64
	for range b.N {
		off += floodOnce(b, nil, nil)
		db, err := journal.Open(context.Background(), filepath.Join(b.TempDir(), "j.db"), nil)
		if err != nil {
			b.Fatal(err)
		}
		on += floodOnce(b, db, &peak)
		db.Close()
	}
	messages := float64(floodChunks+2*floodChunks/100) * float64(b.N)
	b.ReportMetric(messages/off.Seconds(), "msgs/s-off")
	b.ReportMetric(messages/on.Seconds(), "msgs/s-on")
	b.ReportMetric(off.Seconds()/on.Seconds(), "on/off")
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB-on")
}

// BenchmarkHostFloodSlowSubscriber floods a journaled Host twice per
// iteration: alone, and with a subscriber that reads nothing until the
// flood is over and then catches up from the beginning (the journal, then
// the in-memory tail). It reports the flood rate of each (their ratio
// shows whether the slow subscriber slowed the agent; 1 means not at all)
// and the subscriber's catch-up rate in events per second.
func BenchmarkHostFloodSlowSubscriber(b *testing.B) {
	var alone, withSub, catchUp time.Duration
	var caught int
	for range b.N {
		db := openBenchJournal(b)
		alone += floodOnce(b, db, nil)
		db.Close()

		db = openBenchJournal(b)
		var d time.Duration
		d, caught = floodWithLateSubscriber(b, db, &catchUp)
		withSub += d
		db.Close()
	}
	messages := float64(floodChunks+2*floodChunks/100) * float64(b.N)
	b.ReportMetric(messages/alone.Seconds(), "msgs/s-alone")
	b.ReportMetric(messages/withSub.Seconds(), "msgs/s-slow-sub")
	b.ReportMetric(alone.Seconds()/withSub.Seconds(), "slow-sub/alone")
	b.ReportMetric(float64(caught)*float64(b.N)/catchUp.Seconds(), "catchup-events/s")
}

func openBenchJournal(b *testing.B) *journal.DB {
	b.Helper()
	db, err := journal.Open(context.Background(), filepath.Join(b.TempDir(), "j.db"), nil)
	if err != nil {
		b.Fatal(err)
	}
	return db
}

// floodWithLateSubscriber runs one flood with a subscriber that waits for
// the flood to end before it reads anything; it returns the flood's time
// and how many events the subscriber then read, adding its reading time to
// *catchUp. The subscriber must see every event, in order, once.
func floodWithLateSubscriber(b *testing.B, j bridge.Journal, catchUp *time.Duration) (time.Duration, int) {
	b.Helper()
	ctx := context.Background()
	h := bridge.NewHost(&bridge.HostOptions{Journal: j})
	go func() {
		for range h.Events() {
		}
	}()
	br, err := h.Start(ctx, bridge.Config{Transport: &floodagent.Transport{Chunks: floodChunks, ToolEvery: 100}})
	if err != nil {
		b.Fatal(err)
	}
	s, err := br.OpenSession(ctx, bridge.SessionConfig{Cwd: "/w"})
	if err != nil {
		b.Fatal(err)
	}
	floodDone := make(chan struct{})
	var read int
	var readTime time.Duration
	subDone := make(chan struct{})
	sub, stop := context.WithCancel(ctx)
	go func() {
		defer close(subDone)
		<-floodDone // a subscriber that has not read anything during the flood
		start := time.Now()
		var want uint64 = 1
		for ev, err := range h.Subscribe(sub, bridge.Cursor{}) {
			if err != nil {
				b.Error(err)
				return
			}
			if ev.Pos != want {
				b.Errorf("subscriber got Pos %d, want %d", ev.Pos, want)
				return
			}
			want++
			read++
			if ev.Kind == bridge.KindTurnEnd {
				break
			}
		}
		readTime = time.Since(start)
	}()
	start := time.Now()
	if _, err := s.Prompt(ctx, acpclient.TextBlock("flood")); err != nil {
		b.Fatal(err)
	}
	elapsed := time.Since(start)
	close(floodDone)
	<-subDone
	stop()
	*catchUp += readTime
	if err := h.Shutdown(ctx); err != nil {
		b.Fatal(err)
	}
	return elapsed, read
}

// floodOnce runs one flood turn through a Host with journal j (nil: none)
// and returns how long it took from the prompt to the last event read.
func floodOnce(b *testing.B, j bridge.Journal, peak *uint64) time.Duration {
	b.Helper()
	ctx := context.Background()
	var opts bridge.HostOptions
	if j != nil {
		opts.Journal = j
	}
	h := bridge.NewHost(&opts)
	turnEnded := make(chan struct{})
	consumed := make(chan struct{})
	go func() {
		defer close(consumed)
		for ev := range h.Events() {
			if ev.Kind == bridge.KindTurnEnd {
				close(turnEnded)
			}
		}
	}()
	br, err := h.Start(ctx, bridge.Config{Transport: &floodagent.Transport{Chunks: floodChunks, ToolEvery: 100}})
	if err != nil {
		b.Fatal(err)
	}
	s, err := br.OpenSession(ctx, bridge.SessionConfig{Cwd: "/w"})
	if err != nil {
		b.Fatal(err)
	}
	stop := make(chan struct{})
	var sampler sync.WaitGroup
	if peak != nil {
		sampler.Add(1)
		go func() {
			defer sampler.Done()
			var ms runtime.MemStats
			tick := time.NewTicker(20 * time.Millisecond)
			defer tick.Stop()
			for {
				runtime.ReadMemStats(&ms)
				*peak = max(*peak, ms.HeapInuse)
				select {
				case <-stop:
					return
				case <-tick.C:
				}
			}
		}()
	}
	start := time.Now()
	if _, err := s.Prompt(ctx, acpclient.TextBlock("flood")); err != nil {
		b.Fatal(err)
	}
	<-turnEnded
	elapsed := time.Since(start)
	close(stop)
	sampler.Wait()
	if err := h.Shutdown(ctx); err != nil {
		b.Fatal(err)
	}
	<-consumed
	return elapsed
}
