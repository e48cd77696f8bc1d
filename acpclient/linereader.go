package acpclient

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"sync"
)

// lineReader splits a byte stream into lines without a fixed buffer size:
// short lines are returned straight from its buffer, long ones are
// assembled in chunks and joined once, into a buffer of exactly their size
// that the caller may keep. A line of N bytes so costs about 2N bytes of
// allocation, where a buffer grown by append costs up to 5N and pins the
// largest one.
//
// It holds a small buffer of its own, which is all an idle connection keeps
// while its read goroutine waits. A burst (a read that fills the small
// buffer, or a line that does not fit) takes a full-size buffer from
// lineBuffers, and the reader gives it back as soon as it has returned all
// it buffered: a host with many agents so holds full-size buffers only for
// those whose output is arriving, not for every agent that once had a
// burst.
type lineReader struct {
	src io.Reader
	max int
	// buf[r:w] is what is buffered; buf is small or *big.
	buf   []byte
	r, w  int
	small []byte
	big   *[]byte // nil while on the small buffer
	odd   bool    // buf is neither: it holds what park kept
	long  bool    // inside readLong: keep the full-size buffer between pieces
	err   error   // the source's error, returned once buf is empty
	// owned reports that the last line returned is the caller's to keep:
	// it is not overwritten by the following call.
	owned bool
	// lineEnd, when past r, is where the line at r ends (after its
	// newline), as lineBuffered found it: readSlice need not look again.
	lineEnd int
}

// Buffer sizes, and chunk sizes for long lines: an eighth of the line so
// far, at least the full buffer size and at most longChunkMax, so the
// unused tail of the last chunk stays small next to the line.
const (
	lineBufferSize  = 64 << 10
	longChunkMax    = 1 << 20
	firstBufferSize = 4 << 10
)

// lineBuffers holds the full-size buffers of readers between bursts. It is
// a process-wide cache of scratch memory, which no caller can observe.
var lineBuffers = sync.Pool{New: func() any { b := make([]byte, lineBufferSize); return &b }}

func newLineReader(r io.Reader, max int) *lineReader {
	small := make([]byte, firstBufferSize)
	return &lineReader{src: r, max: max, buf: small, small: small}
}

// grow moves what is buffered into a full-size buffer.
func (l *lineReader) grow() {
	l.lineEnd = 0
	l.big = lineBuffers.Get().(*[]byte)
	l.w = copy(*l.big, l.buf[l.r:l.w])
	l.r = 0
	l.buf = *l.big
}

// shrink gives the full-size buffer back; only while nothing is buffered.
func (l *lineReader) shrink() {
	if l.big != nil {
		lineBuffers.Put(l.big)
		l.big, l.buf = nil, l.small
	} else if l.odd {
		l.buf, l.odd = l.small, false
	}
}

// park gives the full-size buffer back while the reader waits for room in
// the queue, which with a slow host is most of the time: what is buffered
// moves to the small buffer, or to one of just its size. A host with many
// agents so holds no full-size buffer for the agents it is not reading,
// except where it buffered more than a quarter of it: the buffer is kept
// then, at most four times what it holds. Under one agent's flood the
// reader parks whenever the queue fills, and moving what it read back and
// forth (into a new buffer, then into a full-size one again) took 5% of a
// 200,000-chunk acprun --events flood, whole process (medians of 30
// alternate runs).
func (l *lineReader) park() {
	if l.big == nil || l.w-l.r > len(*l.big)/4 {
		return
	}
	l.lineEnd = 0
	n := l.w - l.r
	dst := l.small
	if n > len(dst) {
		dst, l.odd = make([]byte, n), true
	}
	copy(dst, l.buf[l.r:l.w])
	lineBuffers.Put(l.big)
	l.big, l.buf, l.r, l.w = nil, dst, 0, n
}

// fill reads once more from the source, after what is buffered.
func (l *lineReader) fill() {
	l.lineEnd = 0 // what is buffered may move
	if l.r == l.w {
		if l.w != 0 { // a reader that has read nothing yet writes nothing
			l.r, l.w = 0, 0
		}
		if !l.long {
			l.shrink() // the reader may now wait long: hold only the small buffer
		}
	} else if l.r > 0 {
		l.w = copy(l.buf, l.buf[l.r:l.w])
		l.r = 0
	}
	for range 100 { // as bufio does, a source that keeps returning nothing is broken
		n, err := l.src.Read(l.buf[l.w:])
		l.w += n
		if err != nil {
			l.err = err
			return
		}
		if n > 0 {
			if l.big == nil && l.w == len(l.buf) {
				l.grow() // a full read says more is waiting
			}
			return
		}
	}
	l.err = io.ErrNoProgress
}

// readSlice returns the bytes up to and including the next newline, valid
// until the next read. Like bufio.Reader.ReadSlice it returns what is
// buffered with bufio.ErrBufferFull when the full-size buffer holds no
// newline, and what is left with the source's error at the end.
func (l *lineReader) readSlice() ([]byte, error) {
	if l.lineEnd > l.r {
		line := l.buf[l.r:l.lineEnd]
		l.r = l.lineEnd
		return line, nil
	}
	scanned := 0
	for {
		if i := bytes.IndexByte(l.buf[l.r+scanned:l.w], '\n'); i >= 0 {
			line := l.buf[l.r : l.r+scanned+i+1]
			l.r += scanned + i + 1
			return line, nil
		}
		scanned = l.w - l.r
		if l.err != nil {
			line := l.buf[l.r:l.w]
			l.r = l.w
			return line, l.err
		}
		if scanned == len(l.buf) {
			if l.big != nil {
				l.r = l.w
				return l.buf, bufio.ErrBufferFull
			}
			l.grow()
		}
		l.fill()
	}
}

// next returns the next non-blank line without its line ending. Unless
// lineOwned says otherwise, the slice is valid until the following call.
func (l *lineReader) next() ([]byte, error) {
	for {
		line, err := l.readSlice()
		l.owned = false
		if err == bufio.ErrBufferFull {
			line, err = l.readLong(line)
			l.owned = true
		}
		if len(line) > l.max+1 || (len(line) > l.max && line[len(line)-1] != '\n') {
			return nil, l.tooLong()
		}
		if err != nil && (err != io.EOF || len(line) == 0) {
			return nil, err
		}
		line = bytes.TrimSpace(line)
		if len(line) > 0 {
			return line, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// lineOwned reports whether the line last returned by next may be kept.
func (l *lineReader) lineOwned() bool { return l.owned }

func (l *lineReader) tooLong() error {
	return fmt.Errorf("%w: more than %d bytes", ErrLineTooLong, l.max)
}

// lineBuffered reports whether a complete line that is not blank is
// already buffered, so the next call to next will not read from the source
// (a blank line alone would not do: next skips it and reads on).
func (l *lineReader) lineBuffered() bool {
	for at := l.r; ; {
		i := bytes.IndexByte(l.buf[at:l.w], '\n')
		if i < 0 {
			return false
		}
		if len(bytes.TrimSpace(l.buf[at:at+i])) > 0 {
			if at == l.r {
				l.lineEnd = at + i + 1 // the line readSlice returns next
			}
			return true
		}
		at += i + 1
	}
}

// readLong continues a line that did not fit in the full-size buffer. It
// stops reading as soon as the line is over the cap.
func (l *lineReader) readLong(first []byte) ([]byte, error) {
	chunks := [][]byte{append(make([]byte, 0, lineBufferSize), first...)}
	total := len(first)
	l.long = true
	defer func() { l.long = false }()
	for {
		piece, err := l.readSlice()
		total += len(piece)
		if total > l.max+1 {
			return nil, l.tooLong()
		}
		for len(piece) > 0 {
			last := &chunks[len(chunks)-1]
			if len(*last) == cap(*last) {
				size := min(max(total/8, lineBufferSize), longChunkMax)
				chunks = append(chunks, make([]byte, 0, size))
				continue
			}
			n := copy((*last)[len(*last):cap(*last)], piece)
			*last = (*last)[:len(*last)+n]
			piece = piece[n:]
		}
		if err != bufio.ErrBufferFull {
			line := make([]byte, 0, total)
			for _, c := range chunks {
				line = append(line, c...)
			}
			return line, err
		}
	}
}
