package main

import (
	"os"
	"runtime"
)

// limitProcs runs acprun's goroutines on one processor at a time from now
// on, unless GOMAXPROCS says otherwise; openSession calls it once the
// session is open. A turn relays one agent: its work is a chain of
// goroutines (read and decode the agent's lines, route them, journal them,
// print them) each handing the next a batch, so a second processor mostly
// moves those hand-offs across cores (wake-ups, spinning schedulers) while
// taking the core the agent writes on. On two cores, acprun under a
// 200,000-chunk flood, whole process, took 10-25% less time and CPU on one
// processor than on two (BenchmarkEventsFloodProcess against the binary
// before, in the same run; BenchmarkEventsFlood -cpu 1,2). Opening the
// session is the other way round: the journal opens, the agent starts and
// the workspace's first checkpoint is recorded side by side, so until then
// acprun keeps every processor (a whole 200,000-chunk flood with
// checkpoints then took some 6% less time than on one processor
// throughout, medians of 25 alternate runs).
func limitProcs() {
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(1)
	}
}
