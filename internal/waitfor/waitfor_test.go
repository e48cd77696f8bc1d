package waitfor

import "testing"

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
