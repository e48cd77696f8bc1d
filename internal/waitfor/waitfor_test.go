package waitfor

import (
	"fmt"
	"testing"
	"time"
)

// TestWaitsThatEndInTime: each wait returns once what it waits for has
// happened.
func TestRecvReturnsTheValue(t *testing.T) {
	ch := make(chan int, 1)
	ch <- 7
	if got := Recv(t, ch, "seven"); got != 7 {
		t.Fatalf("Recv = %d", got)
	}
	done := make(chan struct{})
	close(done)
	Closed(t, done, "closed")
	n := 0
	Until(t, "n to reach 3", func() bool { n++; return n == 3 })
	Call(t, "a call", func() {})
	if err := Context(t).Err(); err != nil {
		t.Fatal(err)
	}
}

// fatalTB records the message of Fatalf instead of ending the test.
type fatalTB struct {
	testing.TB
	msg string
}

func (f *fatalTB) Helper()                           {}
func (f *fatalTB) Fatalf(format string, args ...any) { f.msg = fmt.Sprintf(format, args...) }

// TestAWaitThatOutlastsItsBoundSaysWhatItWaitedFor: the failure names the
// wait and its bound.
func TestAWaitThatOutlastsItsBoundSaysWhatItWaitedFor(t *testing.T) {
	tb := &fatalTB{TB: t}
	recvWithin(tb, make(chan int), time.Millisecond, "the answer")
	if want := "waited 1ms for the answer"; tb.msg != want {
		t.Errorf("failure %q, want %q", tb.msg, want)
	}
}
