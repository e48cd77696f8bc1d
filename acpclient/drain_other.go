//go:build !unix

package acpclient

import (
	"io"
	"os"
)

// drainPipe copies f to w until f ends or fails.
func drainPipe(w io.Writer, f *os.File) {
	_, _ = io.CopyBuffer(w, f, make([]byte, 4<<10))
}
