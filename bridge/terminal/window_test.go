package terminal

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestOutputWindowKeepsTheEndAtCharacterBoundaries: whatever the pieces,
// the window holds the longest suffix of the output that fits the limit
// and starts a character, and says when it dropped something.
func TestOutputWindowKeepsTheEndAtCharacterBoundaries(t *testing.T) {
	const text = "aé€😀 plain ascii 😀€éa"
	for limit := 0; limit <= len(text)+1; limit++ {
		for _, piece := range []int{1, 2, 3, 5, len(text)} {
			w := newOutputWindow(limit)
			for i := 0; i < len(text); i += piece {
				w.write([]byte(text[i:min(i+piece, len(text))]))
			}
			got, truncated := w.output(true)
			want := text[max(0, len(text)-limit):]
			for len(want) > 0 && !utf8.RuneStart(want[0]) {
				want = want[1:]
			}
			if got != want || truncated != (limit < len(text)) {
				t.Errorf("limit %d, pieces of %d: %q truncated %v, want %q", limit, piece, got, truncated, want)
			}
		}
	}
}

// TestOutputWindowStaysBounded: the buffer never grows far beyond the
// limit, however much is written.
func TestOutputWindowStaysBounded(t *testing.T) {
	w := newOutputWindow(1000)
	chunk := []byte(strings.Repeat("x", 333))
	for range 10000 {
		w.write(chunk)
		if cap(w.buf) > 4*1000 {
			t.Fatalf("buffer capacity %d for a limit of 1000", cap(w.buf))
		}
	}
	if got, _ := w.output(true); len(got) != 1000 {
		t.Errorf("kept %d bytes, want 1000", len(got))
	}
}

// TestOutputWindowSince: the live view gets what is new, never half a
// character while the command runs, and at most max bytes (the newest),
// marked skipped when it missed some.
func TestOutputWindowSince(t *testing.T) {
	w := newOutputWindow(10)
	w.write([]byte("ab\xe2\x82")) // "ab" and the start of "€"
	data, next, skipped := w.since(0, 100, false)
	if data != "ab" || next != 2 || skipped {
		t.Fatalf("since(0) = %q %d %v, want \"ab\" 2 false", data, next, skipped)
	}
	w.write([]byte("\xac0123456789"))
	data, next, skipped = w.since(next, 4, false)
	if data != "6789" || next != 15 || !skipped {
		t.Errorf("since(2, max 4) = %q %d %v, want \"6789\" 15 true", data, next, skipped)
	}
	if data, _, skipped = w.since(next, 4, true); data != "" || skipped {
		t.Errorf("nothing new: %q %v", data, skipped)
	}
}
