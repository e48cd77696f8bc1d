package acpclient

import (
	"context"
	"testing"
	"time"
)

// TestStartKeepsOutputReadAfterTheDrain: output the pipe still holds when
// a reader comes back after the exit drain has expired (a reader behind a
// fast command on a loaded machine) is read whole, not dropped: the
// expired deadline ends only the waiting.
func TestStartKeepsOutputReadAfterTheDrain(t *testing.T) {
	const size = 60000 // fits a pipe: the command exits without a reader
	tr := &CommandTransport{Path: "/bin/sh", Args: []string{"-c", "head -c 60000 /dev/zero"}, ExitDrain: time.Millisecond}
	c, err := tr.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	select {
	case <-c.Exited():
	case <-time.After(10 * time.Second):
		t.Fatal("the command did not exit")
	}
	time.Sleep(20 * time.Millisecond) // the drain has expired: nothing read yet
	out, err := readAllErr(t, c)
	if err != nil || len(out) != size {
		t.Fatalf("read %d bytes, %v, after the drain; want all %d", len(out), err, size)
	}
	if st := waitStatus(t, c); st.ExitCode == nil || *st.ExitCode != 0 {
		t.Errorf("status %+v, want exit 0", st)
	}
}
