package main

import (
	"context"
	"io"
	"runtime"
	"testing"

	"github.com/acphost/acphost/bridge"
	"github.com/acphost/acphost/internal/waitfor"
)

// TestLimitProcs: acprun runs on one processor, unless GOMAXPROCS asks for
// another number, which it keeps.
func TestLimitProcs(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, c := range []struct {
		env       string
		was, want int
	}{
		{env: "", was: 2, want: 1},
		{env: "3", was: 3, want: 3},
	} {
		t.Setenv("GOMAXPROCS", c.env)
		runtime.GOMAXPROCS(c.was)
		limitProcs()
		if got := runtime.GOMAXPROCS(0); got != c.want {
			t.Errorf("GOMAXPROCS=%q: %d processors, want %d", c.env, got, c.want)
		}
	}
}

// TestProcsLimitedOnceTheSessionOpens: acprun opens its session on every
// processor and runs its turns on one.
func TestProcsLimitedOnceTheSessionOpens(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	t.Setenv("GOMAXPROCS", "")
	o, err := parseArgs([]string{"--cwd", t.TempDir(), "--checkpoints=false", "hello"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	host := bridge.NewHost(nil)
	go func() {
		for range host.Events() {
		}
	}()
	defer host.Shutdown(context.Background())
	var closers []io.Closer
	defer func() {
		for _, c := range closers {
			c.Close()
		}
	}()
	sess, err := openSession(waitfor.Context(t), o, host, false, &closers)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close(context.Background())
	if n := runtime.GOMAXPROCS(0); n != 1 {
		t.Errorf("the session is open and acprun runs on %d processors, want 1", n)
	}
}
