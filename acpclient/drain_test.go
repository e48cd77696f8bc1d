package acpclient

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/acphost/acphost/internal/waitfor"
)

// TestDrainPipeCopiesEverything writes more than a drain buffer in pieces,
// with pauses where the pipe is empty, and checks that drainPipe hands on
// every byte in order and returns at the end of the pipe.
func TestDrainPipeCopiesEverything(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var got bytes.Buffer
	done := make(chan struct{})
	go func() {
		defer close(done)
		drainPipe(&got, r)
	}()
	var want strings.Builder
	for i := range 40 {
		piece := strings.Repeat(string(rune('a'+i%26)), 3000)
		want.WriteString(piece)
		if _, err := w.WriteString(piece); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	waitfor.Closed(t, done, "the call to return")
	if got.String() != want.String() {
		t.Fatalf("drained %d bytes, want %d (or out of order)", got.Len(), want.Len())
	}
}
