package main

import (
	"runtime"
	"testing"
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
