//go:build !plainwire

package acpclient

import (
	"fmt"
	"io"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/acphost/acphost/internal/waitfor"
)

// Before the read goroutine waits on a quiet agent, it puts the boxes it
// took and did not use back where a collection reaches them: a connection
// that streamed text deltas and went idle keeps none of its own.
func TestBoxesReleasedBeforeWaiting(t *testing.T) {
	client := newDeltaClient()
	wait := func(t *testing.T, n int) { client.wait(t, n) }
	checkReleasedBeforeWaiting(t, client, wait, func(c *Conn) int { return c.chunks.deltas.Held() })
}

// checkReleasedBeforeWaiting streams chunks to client, waits (wait) until
// they are delivered, and checks that held, read on the read goroutine
// while it waits on the agent, is zero.
func checkReleasedBeforeWaiting(t *testing.T, client Client, wait func(*testing.T, int), held func(*Conn) int) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1)) // a collection empties the pools
	var lines strings.Builder
	for i := range 300 {
		lines.WriteString(chunkLineJSON("s", fmt.Sprint("t", i)) + "\n")
	}
	holding := make(chan int, 1)
	var c *Conn
	pr, pw := io.Pipe()
	c = NewConn(pipeStream{Reader: pr, Writer: io.Discard, closer: pr}, client, &ConnOptions{
		OnBadLine: func(BadLine) { holding <- held(c) }, // on the read goroutine
	})
	defer func() {
		pw.Close()
		<-c.Done()
	}()
	pw.Write([]byte(lines.String()))
	wait(t, 300) // the boxes are given back
	pw.Write([]byte(chunkLineJSON("s", "one more") + "\n"))
	wait(t, 301)
	pw.Write([]byte("junk\n"))
	if n := waitfor.Recv(t, holding, "holding"); n != 0 {
		t.Fatalf("waiting for the agent, the read goroutine held %d boxes", n)
	}
}
