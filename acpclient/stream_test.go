package acpclient

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"
)

// TestLineReaderGrows: an idle reader holds only the small buffer; a long
// line, or enough short ones, move it to the full-size buffer, and every
// line arrives whole and in order across the move, however the bytes are
// split into reads.
func TestLineReaderGrows(t *testing.T) {
	var want []string
	var in bytes.Buffer
	for i := range 2000 {
		l := fmt.Sprintf("line %d.%s", i, strings.Repeat("x", i%97))
		if i == 7 {
			l = strings.Repeat("long", 3000) // over the small buffer
		}
		want = append(want, l)
		in.WriteString(l + "\n")
	}
	for _, name := range []string{"long line first", "short lines only"} {
		data := in.Bytes()
		if name == "short lines only" {
			data = bytes.ReplaceAll(data, []byte(want[7]), []byte("short"))
		}
		r := newLineReader(io.MultiReader(bytes.NewReader(data[:100]), &oneByteEvery{data[100:]}), 1<<20)
		if got := r.r.Size(); got != firstBufferSize {
			t.Fatalf("%s: buffer of %d bytes before any read, want %d", name, got, firstBufferSize)
		}
		for i := range want {
			line, err := r.next()
			if err != nil {
				t.Fatalf("%s: line %d: %v", name, i, err)
			}
			w := want[i]
			if i == 7 && name == "short lines only" {
				w = "short"
			}
			if string(line) != w {
				t.Fatalf("%s: line %d is %.40q, want %.40q", name, i, line, w)
			}
			if i == 0 && r.r.Size() != firstBufferSize {
				t.Fatalf("%s: grew after one short line", name)
			}
			if grown := r.r.Size() == lineBufferSize; i == 7 && grown != (name == "long line first") {
				t.Fatalf("%s: grown %v after line 7", name, grown)
			}
		}
		if _, err := r.next(); err != io.EOF {
			t.Fatalf("%s: after the last line: %v, want EOF", name, err)
		}
		if got := r.r.Size(); got != lineBufferSize {
			t.Errorf("%s: buffer of %d bytes at the end, want %d", name, got, lineBufferSize)
		}
	}
}

// oneByteEvery returns its data in reads of varying short lengths.
type oneByteEvery struct{ b []byte }

func (o *oneByteEvery) Read(p []byte) (int, error) {
	if len(o.b) == 0 {
		return 0, io.EOF
	}
	n := min(len(p), len(o.b), 1+len(o.b)%5000)
	copy(p, o.b[:n])
	o.b = o.b[n:]
	return n, nil
}
