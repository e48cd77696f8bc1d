//go:build unix

package acpclient

import (
	"io"
	"os"
	"sync"
	"syscall"
)

// drainBuffers are the read buffers of drainPipe, shared by every agent's
// stderr: a buffer is taken only once bytes are waiting and given back
// before the next wait, so idle agents hold none.
var drainBuffers = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// drainPipe copies f to w until f ends or fails. It waits for f to be
// readable before taking a buffer, so an agent that is quiet on stderr costs
// its goroutine and no buffer.
func drainPipe(w io.Writer, f *os.File) {
	rc, err := f.SyscallConn()
	if err != nil {
		_, _ = io.Copy(w, f)
		return
	}
	for {
		var n int
		var readErr error
		err := rc.Read(func(fd uintptr) bool {
			buf := drainBuffers.Get().(*[]byte)
			defer drainBuffers.Put(buf)
			for {
				n, readErr = syscall.Read(int(fd), *buf)
				if readErr != syscall.EINTR {
					break
				}
			}
			if readErr == syscall.EAGAIN {
				return false // wait for bytes without holding the buffer
			}
			if n > 0 {
				_, _ = w.Write((*buf)[:n])
			}
			return true
		})
		if err != nil || readErr != nil || n <= 0 {
			return
		}
	}
}
