package acpclient

import (
	"context"
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/acphost/acphost/internal/waitfor"
)

// TestAgentOutlivesTheThreadThatStartedIt: the parent-death signal must not
// fire when the OS thread of the goroutine that called Connect ends (here a
// goroutine locked to its thread returns, which ends the thread).
func TestAgentOutlivesTheThreadThatStartedIt(t *testing.T) {
	type result struct {
		p   *process
		tid int
		err error
	}
	res := make(chan result)
	start := func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		if unix.Gettid() == os.Getpid() {
			// The main thread is never ended, only parked; try another.
			runtime.UnlockOSThread()
			res <- result{}
			return
		}
		rwc, err := Command("/bin/cat").Connect(context.Background())
		p, _ := rwc.(*process)
		res <- result{p, unix.Gettid(), err}
	}
	var r result
	for r.tid == 0 {
		go start()
		r = waitfor.Recv(t, res, "res")
	}
	if r.err != nil {
		t.Fatal(r.err)
	}
	defer r.p.Close()
	task := "/proc/self/task/" + strconv.Itoa(r.tid)
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(2 * time.Millisecond) {
		if _, err := os.Stat(task); os.IsNotExist(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the locked thread did not end")
		}
	}
	// A signal sent as the thread ended would have killed cat before it
	// could echo this.
	if _, err := r.p.Write([]byte("still here\n")); err != nil {
		t.Fatalf("agent gone after its starting thread ended: %v", err)
	}
	buf := make([]byte, 11)
	if n, err := r.p.Read(buf); err != nil || string(buf[:n]) != "still here\n" {
		t.Fatalf("agent gone after its starting thread ended: read %q, %v", buf[:n], err)
	}
}
