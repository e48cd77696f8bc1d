package acpclient

import (
	"io"
	"os"
)

// readLeftover reads into b what the pipe f still holds once its exit
// drain has expired (its read deadline passed), counting the bytes in
// *read, at most max in all; io.EOF once it is empty or max is reached. A
// reader that falls behind a fast writer keeps the writer's last output
// this way: the expired deadline alone would refuse it, full pipe and all.
func readLeftover(f *os.File, b []byte, read *int, max int) (int, error) {
	if *read >= max {
		return 0, io.EOF
	}
	n := readBuffered(f, b[:min(len(b), max-*read)])
	if n == 0 {
		*read = max
		return 0, io.EOF
	}
	*read += n
	return n, nil
}
