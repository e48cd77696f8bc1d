//go:build !unix

package floodagent

import (
	"errors"
	"time"
)

// ProcessCPU is the user and system time this process has used; this
// system does not say.
func ProcessCPU() (time.Duration, error) {
	return 0, errors.New("floodagent: no process CPU time on this system")
}
