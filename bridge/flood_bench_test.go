package bridge

import (
	"bytes"
	"context"
	"sync"
	"testing"
	"time"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/internal/floodagent"
)

// hostFloodChunks is the size of the flood.
const hostFloodChunks = 200_000

// BenchmarkHostFlood floods one Host with hostFloodChunks text chunks from
// the flood agent (internal/floodagent) and a consumer that only counts
// events, and in the same iteration runs the floor: the same agent's output
// read by a sink that only counts newlines (the pipe limit). It reports the
// floor's time over the Host's ("x-pipe"), the Host's wall time per chunk,
// and CPU per chunk from getrusage around each run: the whole process's
// during the Host's flood ("cpu-ns/chunk"), and that less the floor's
// ("client-cpu-ns/chunk").
//
// "process" runs the agent as a process of its own, started by
// acpclient.CommandTransport as apps start agents: this process's CPU is
// then the client's alone, and client-cpu is what it spends beyond reading
// the pipe. "inprocess" runs the agent on OS pipes inside this process,
// where agent and client share the CPU figures and the runtime (its
// collections too); client-cpu there leaves out the agent's writing by
// subtracting the floor, which also ran the agent.
//
// "varied" is "process" with the varied flood, as real agents write it
// (floodagent's Varied): escaped and non-ASCII text, two key orders, and a
// _meta that changes on every fourth chunk.
func BenchmarkHostFlood(b *testing.B) {
	b.Run("process", func(b *testing.B) { benchHostFlood(b, &floodagent.Process{Chunks: hostFloodChunks}, floodText()) })
	b.Run("inprocess", func(b *testing.B) { benchHostFlood(b, &floodagent.Transport{Chunks: hostFloodChunks}, floodText()) })
	b.Run("varied", func(b *testing.B) {
		benchHostFlood(b, &floodagent.Process{Chunks: hostFloodChunks, Varied: true}, variedFloodText())
	})
}

func benchHostFlood(b *testing.B, agent floodagent.Agent, want []byte) {
	var host, pipe floodRun
	floodHostOnce(b, agent, want) // the first flood of a process is slower: warm up
	for b.Loop() {
		host.add(floodHostOnce(b, agent, want))
		pipe.add(floodPipeOnce(b, agent))
	}
	chunks := float64(b.N * hostFloodChunks)
	b.ReportMetric(pipe.wall.Seconds()/host.wall.Seconds(), "x-pipe")
	b.ReportMetric(float64(host.wall.Nanoseconds())/chunks, "ns/chunk")
	b.ReportMetric(float64(host.cpu.Nanoseconds())/chunks, "cpu-ns/chunk")
	b.ReportMetric(float64((host.cpu-pipe.cpu).Nanoseconds())/chunks, "client-cpu-ns/chunk")
}

// floodRun is the wall and process CPU time of floods.
type floodRun struct{ wall, cpu time.Duration }

func (r *floodRun) add(o floodRun) { r.wall, r.cpu = r.wall+o.wall, r.cpu+o.cpu }

// measureFlood times run, in wall clock and in the process's CPU.
func measureFlood(b *testing.B, run func()) floodRun {
	b.Helper()
	cpu0, err := floodagent.ProcessCPU()
	if err != nil {
		b.Skip(err)
	}
	start := time.Now()
	run()
	wall := time.Since(start)
	cpu1, _ := floodagent.ProcessCPU()
	return floodRun{wall: wall, cpu: cpu1 - cpu0}
}

// floodHostOnce runs one flood turn through a new Host, from the prompt to
// the turn's end on Events, and checks its text is want: every chunk, in
// order.
func floodHostOnce(b *testing.B, agent floodagent.Agent, want []byte) floodRun {
	b.Helper()
	ctx := context.Background()
	h := NewHost(nil)
	turnEnded := make(chan struct{})
	// The consumer keeps the text to check it, in a buffer grown once: a
	// buffer doubling under the flood would fault in fresh pages (and add
	// collections) on the consumer's side, which is not the Host's cost.
	var text bytes.Buffer
	text.Grow(len(want))
	go func() {
		for ev := range h.Events() {
			switch ev.Kind {
			case KindText:
				text.WriteString(ev.Text)
			case KindTurnEnd:
				close(turnEnded)
			}
		}
	}()
	br, err := h.Start(ctx, Config{Transport: agent})
	if err != nil {
		b.Fatal(err)
	}
	s, err := br.OpenSession(ctx, SessionConfig{Cwd: "/w"})
	if err != nil {
		b.Fatal(err)
	}
	r := measureFlood(b, func() {
		if _, err := s.Prompt(ctx, acpclient.TextBlock("flood")); err != nil {
			b.Fatal(err)
		}
		<-turnEnded
	})
	if err := h.Shutdown(ctx); err != nil {
		b.Fatal(err)
	}
	if !bytes.Equal(text.Bytes(), want) {
		b.Fatalf("flood delivered %d bytes of text, want %d in order: chunks lost or reordered", text.Len(), len(want))
	}
	return r
}

// floodText and variedFloodText are the text of a whole flood, every
// chunk in order, built once per process.
var (
	floodText       = sync.OnceValue(func() []byte { return floodagent.Text(hostFloodChunks, false) })
	variedFloodText = sync.OnceValue(func() []byte { return floodagent.Text(hostFloodChunks, true) })
)

// floodPipeOnce is the floor: the same agent flooding one prompt, read by
// a sink that counts newlines until the prompt's answer.
func floodPipeOnce(b *testing.B, agent floodagent.Agent) floodRun {
	b.Helper()
	sink, err := floodagent.NewSink(context.Background(), agent)
	if err != nil {
		b.Fatal(err)
	}
	defer sink.Close()
	return measureFlood(b, func() {
		if err := sink.Flood(); err != nil {
			b.Fatal(err)
		}
	})
}
