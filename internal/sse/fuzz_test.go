package sse

import (
	"strings"
	"testing"
	"testing/iotest"
)

// FuzzSSEReader checks the streaming reader against a reader of the whole
// stream at once, read whole and one byte at a time.
func FuzzSSEReader(f *testing.F) {
	for _, s := range []string{
		"data: {\"a\":1}\n\n",
		":\n\ndata: a\r\ndata: b\r\r",
		"\xEF\xBB\xBFevent: x\ndata\n\ndata: cut",
		"data:\n\ndata: \n\n",
		"retry: 5\rdata:x\r\n\r\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		want := reference(in)
		for _, got := range [][]string{
			events(t, strings.NewReader(in)),
			events(t, iotest.OneByteReader(strings.NewReader(in))),
		} {
			if !equal(dropEmptyTail(got), dropEmptyTail(want)) {
				t.Fatalf("input %q: events %q, want %q", in, got, want)
			}
		}
	})
}

func dropEmptyTail(ev []string) []string {
	for len(ev) > 0 && ev[len(ev)-1] == "" {
		ev = ev[:len(ev)-1]
	}
	return ev
}
