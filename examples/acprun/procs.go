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
// taking the core the agent writes on. A 200,000-chunk flood on two cores
// took ~15-25% less time and CPU per chunk on one processor than on two
// (BenchmarkEventsFlood -cpu 1,2; BenchmarkEventsFloodProcess).
func limitProcs() {
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(1)
	}
}
