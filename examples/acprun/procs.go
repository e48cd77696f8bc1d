package main

import (
	"os"
	"runtime"
)

// limitProcs runs acprun's goroutines on one processor at a time unless
// GOMAXPROCS says otherwise. acprun relays one agent: its work is a chain of
// goroutines (read and decode the agent's lines, route them, journal them,
// print them) each handing the next a batch, so a second processor mostly
// moves those hand-offs across cores (wake-ups, spinning schedulers) while
// taking the core the agent writes on. On two cores, acprun under a
// 200,000-chunk flood, whole process, took 10-25% less time and CPU on one
// processor than on two (BenchmarkEventsFloodProcess against the binary
// before, in the same run; BenchmarkEventsFlood -cpu 1,2).
func limitProcs() {
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(1)
	}
}
