package acpclient

import (
	"errors"
	"fmt"
	"os"
	"syscall"

	"github.com/creack/pty"
)

// ptySize is the window size a command's pseudo-terminal reports: the
// classic terminal, as nobody resizes it.
var ptySize = pty.Winsize{Rows: 24, Cols: 80}

// outputPipe returns the read end of the command's output and the end the
// command writes: a pipe, or with PTY a pseudo-terminal's master and slave.
func (t *CommandTransport) outputPipe() (r, w *os.File, err error) {
	if !t.PTY {
		return os.Pipe()
	}
	master, slave, err := pty.Open()
	if err != nil {
		return nil, nil, fmt.Errorf("opening a pseudo-terminal: %w", err)
	}
	if err := pty.Setsize(master, &ptySize); err != nil {
		master.Close()
		slave.Close()
		return nil, nil, fmt.Errorf("sizing the pseudo-terminal: %w", err)
	}
	return master, slave, nil
}

// ptyEnded reports whether a read of a pseudo-terminal's master failed
// because every slave end is closed (EIO on Linux): the command's end.
func ptyEnded(err error) bool { return errors.Is(err, syscall.EIO) }
