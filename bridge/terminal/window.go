package terminal

import (
	"sync"
	"unicode/utf8"
)

// outputWindow keeps the end of a terminal's output: at most limit bytes,
// dropped from the start at a UTF-8 character boundary, whatever the
// command prints. It also counts every byte written, so the live events
// can tell what they have not sent yet.
type outputWindow struct {
	mu        sync.Mutex
	limit     int
	buf       []byte // the kept output is buf[start:]
	start     int
	written   int64 // bytes written in all; buf's end is this offset
	truncated bool
}

func newOutputWindow(limit int) *outputWindow { return &outputWindow{limit: limit} }

// write appends p and drops what no longer fits. The buffer grows to at
// most twice the limit before the kept part is moved to its front, so a
// long run costs one copy per limit bytes written.
func (w *outputWindow) write(p []byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.written += int64(len(p))
	if len(p) > w.limit {
		// A piece larger than the window: only its end can stay.
		w.buf = append(w.buf[:0], p[len(p)-w.limit:]...)
		w.start, w.truncated = charStart(w.buf, 0), true
		return
	}
	w.buf = append(w.buf, p...)
	if kept := len(w.buf) - w.start; kept > w.limit {
		w.start = charStart(w.buf, len(w.buf)-w.limit)
		w.truncated = true
	}
	if w.start > w.limit || w.start == len(w.buf) {
		w.buf = w.buf[:copy(w.buf, w.buf[w.start:])]
		w.start = 0
	}
}

// output returns the kept output and whether anything was dropped. The
// start is always a character boundary; unless final (the command has
// ended), a character the command is still writing is left out.
func (w *outputWindow) output(final bool) (string, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	kept := w.buf[w.start:]
	if !final {
		kept = kept[:completeEnd(kept)]
	}
	return string(kept), w.truncated
}

// since returns what was written after offset from, at most max bytes (the
// newest, from a character boundary), the offset to ask from next time,
// and whether bytes after from were skipped (dropped by the window or over
// max). Unless final, an incomplete character at the end is left for the
// next call.
func (w *outputWindow) since(from int64, max int, final bool) (data string, next int64, skipped bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	kept := w.buf[w.start:]
	keptFrom := w.written - int64(len(kept))
	if from < keptFrom {
		from, skipped = keptFrom, true
	}
	piece := kept[from-keptFrom:]
	if !final {
		piece = piece[:completeEnd(piece)]
	}
	end := from + int64(len(piece))
	if len(piece) > max {
		cut := charStart(piece, len(piece)-max)
		piece, skipped = piece[cut:], true
	}
	return string(piece), end, skipped
}

// charStart returns the first index at or after i that starts a character
// (skipping at most the three continuation bytes a character can have), so
// a cut there splits none.
func charStart(b []byte, i int) int {
	for n := 0; n < utf8.UTFMax-1 && i < len(b) && !utf8.RuneStart(b[i]); n++ {
		i++
	}
	return i
}

// completeEnd returns the length of b without a trailing incomplete
// character.
func completeEnd(b []byte) int {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if utf8.FullRune(b[i:]) {
				return len(b)
			}
			return i
		}
	}
	return len(b)
}
