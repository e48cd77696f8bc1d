package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/bridge"
	"github.com/acphost/acphost/internal/floodagent"
	"github.com/acphost/acphost/journal"
)

// eventsFloodChunks is the size of the flood.
const eventsFloodChunks = 200_000

// BenchmarkEventsFlood is acprun --events under a flood of
// eventsFloodChunks text chunks, in process: a Host with its journal, as
// acprun opens it, every event relayed as acprun relays them and written by
// the --events writer as a line to a pipe whose reader only counts lines.
// The same iteration runs the floor, the same agent's output read by a
// newline counter (the pipe limit), and reports the floor's time over
// acprun's ("x-pipe"), acprun's time per chunk, and the CPU time this
// process spent per chunk (with "process", the agent's is not in it),
// which shows the cost of the events path on a loaded machine too. "process" runs the flood agent as a process of its own, started as
// acprun starts agents; "inprocess" runs it on OS pipes in this process,
// sharing its cores and runtime (internal/floodagent). acprun runs on one
// processor (limitProcs): -cpu 1 measures the path as it runs there.
func BenchmarkEventsFlood(b *testing.B) {
	b.Run("process", func(b *testing.B) { benchEventsFlood(b, &floodagent.Process{Chunks: eventsFloodChunks}) })
	b.Run("inprocess", func(b *testing.B) { benchEventsFlood(b, &floodagent.Transport{Chunks: eventsFloodChunks}) })
}

func benchEventsFlood(b *testing.B, agent floodagent.Agent) {
	var events, cpu, pipe time.Duration
	eventsFloodOnce(b, agent) // the first flood of a process is slower: warm up
	for b.Loop() {
		wall, used := eventsFloodOnce(b, agent)
		events, cpu = events+wall, cpu+used
		pipe += eventsFloorOnce(b, agent)
	}
	chunks := float64(b.N * eventsFloodChunks)
	b.ReportMetric(pipe.Seconds()/events.Seconds(), "x-pipe")
	b.ReportMetric(float64(events.Nanoseconds())/chunks, "ns/chunk")
	b.ReportMetric(float64(cpu.Nanoseconds())/chunks, "cpu-ns/chunk")
}

// eventsFloodOnce floods one prompt through acprun's event path and
// returns the time from the prompt to the turn end's line, and the
// process's CPU time over it; it checks the lines carry every chunk's
// text.
func eventsFloodOnce(b *testing.B, agent floodagent.Agent) (wall, cpu time.Duration) {
	b.Helper()
	ctx := context.Background()
	db, err := journal.Open(ctx, filepath.Join(b.TempDir(), "j.db"), journalOptions(false))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	host := bridge.NewHost(hostOptions(db))
	pr, pw, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	out := newJSONOutput(pw)
	shown := make(chan struct{})
	go func() {
		defer close(shown)
		defer pw.Close()
		relayEvents(host.Events(), out, out.event)
		out.finish()
	}()
	turnEnded, text := make(chan struct{}), make(chan int, 1)
	go func() { text <- readEventLines(b, pr, turnEnded) }()
	br, err := host.Start(ctx, bridge.Config{Transport: agent})
	if err != nil {
		b.Fatal(err)
	}
	s, err := br.OpenSession(ctx, bridge.SessionConfig{Cwd: "/w"})
	if err != nil {
		b.Fatal(err)
	}
	cpu0, err := floodagent.ProcessCPU()
	if err != nil {
		b.Skip(err)
	}
	start := time.Now()
	if _, err := s.Prompt(ctx, acpclient.TextBlock("flood")); err != nil {
		b.Fatal(err)
	}
	<-turnEnded
	wall = time.Since(start)
	cpu1, _ := floodagent.ProcessCPU()
	if err := host.Shutdown(ctx); err != nil {
		b.Fatal(err)
	}
	<-shown
	if got, want := <-text, floodText(); got != want {
		b.Fatalf("the lines carried %d bytes of text, want %d", got, want)
	}
	return wall, cpu1 - cpu0
}

// readEventLines reads event lines until r ends, closing turnEnded at the
// turn's end, and returns the length of the text they carried. It finds
// the text without decoding the line (a flood's text has no escapes): the
// consumer of the lines is not what is measured, and it shares the
// process's cores.
func readEventLines(b *testing.B, r io.ReadCloser, turnEnded chan struct{}) int {
	defer r.Close()
	in := bufio.NewScanner(r)
	in.Buffer(make([]byte, 64<<10), 64<<20)
	text := 0
	for in.Scan() {
		line := in.Bytes()
		head := line[:min(len(line), 200)]
		switch {
		case bytes.Contains(head, []byte(`"kind":"text"`)):
			_, rest, ok := bytes.Cut(line, []byte(`,"text":"`))
			end := bytes.IndexByte(rest, '"')
			if !ok || end < 0 {
				b.Errorf("a text event without its text: %s", line)
				continue
			}
			text += end
		case bytes.Contains(head, []byte(`"kind":"turn_end"`)):
			close(turnEnded)
		}
	}
	return text
}

// floodText is how much text a flood carries.
func floodText() int {
	n := 0
	for i := range eventsFloodChunks {
		n += len("chunk  ") + len(strconv.Itoa(i))
	}
	return n
}

// eventsFloorOnce is the floor: the same agent's flood read by a newline
// counter.
func eventsFloorOnce(b *testing.B, agent floodagent.Agent) time.Duration {
	b.Helper()
	sink, err := floodagent.NewSink(context.Background(), agent)
	if err != nil {
		b.Fatal(err)
	}
	defer sink.Close()
	start := time.Now()
	if err := sink.Flood(); err != nil {
		b.Fatal(err)
	}
	return time.Since(start)
}
