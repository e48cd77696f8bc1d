//go:build unix

package acpclient

import (
	"os"
	"syscall"
	"time"
)

// readBuffered reads what the pipe f holds right now, without waiting, after
// a read deadline has passed: 0 means it is empty (or closed).
func readBuffered(f *os.File, b []byte) int {
	rc, err := f.SyscallConn()
	if err != nil {
		return 0
	}
	// The expired deadline would refuse this read too; it is restored
	// after, so that no later read waits again.
	if f.SetReadDeadline(time.Time{}) != nil {
		return 0
	}
	defer f.SetReadDeadline(time.Unix(1, 0))
	n := 0
	_ = rc.Read(func(fd uintptr) bool {
		for {
			k, err := syscall.Read(int(fd), b)
			if err == syscall.EINTR {
				continue
			}
			if err == nil && k > 0 {
				n = k
			}
			return true // never wait: the descriptor is non-blocking
		}
	})
	return n
}
