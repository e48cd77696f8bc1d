package floodagent

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/acphost/acphost/acpclient"
)

// processEnv carries a Process's settings to the agent it starts.
const processEnv = "ACPHOST_FLOODAGENT"

// Process starts the flood agent as a process of its own, through
// acpclient.CommandTransport as an app starts an agent: the running test
// binary again, which becomes the agent in RunIfProcess. With the agent in
// another process, this process's CPU time is the client's alone, and the
// agent's writing and collection do not compete with the client's for its
// runtime. It implements acpclient.Transport.
type Process struct {
	// Chunks, ToolEvery and Varied are as in Transport.
	Chunks, ToolEvery int
	Varied            bool
}

// Connect starts the agent process.
func (p *Process) Connect(ctx context.Context) (io.ReadWriteCloser, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("floodagent: finding the test binary: %w", err)
	}
	t := &acpclient.CommandTransport{
		Path: exe,
		Env:  []string{fmt.Sprintf("%s=%d,%d,%t", processEnv, p.Chunks, p.ToolEvery, p.Varied)},
	}
	return t.Connect(ctx)
}

func (p *Process) linesPerFlood() int { return settings{p.Chunks, p.ToolEvery, p.Varied}.lines() }

// RunIfProcess makes this process the agent when a Process started it: it
// serves stdin and stdout and exits. A test binary that uses Process calls
// it first thing in TestMain; otherwise it returns at once.
func RunIfProcess() {
	v, ok := os.LookupEnv(processEnv)
	if !ok {
		return
	}
	var set settings
	if _, err := fmt.Sscanf(v, "%d,%d,%t", &set.chunks, &set.toolEvery, &set.varied); err != nil {
		fmt.Fprintf(os.Stderr, "floodagent: bad %s=%q: %v\n", processEnv, v, err)
		os.Exit(2)
	}
	serve(os.Stdin, os.Stdout, set)
	os.Exit(0)
}
