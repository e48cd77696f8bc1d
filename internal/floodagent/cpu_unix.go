//go:build unix

package floodagent

import (
	"fmt"
	"syscall"
	"time"
)

// ProcessCPU is the user and system time this process has used, for CPU
// per chunk around a flood: the client's alone with a Process agent, the
// agent's too with a Transport agent, which shares the process.
func ProcessCPU() (time.Duration, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, fmt.Errorf("floodagent: getrusage: %w", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
}
