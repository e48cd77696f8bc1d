package sse

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// events reads every event of in through a Reader, in reads of the size
// the reader r gives, and returns their data; a last event cut short by
// the end of the stream is included if it had data.
func events(t testing.TB, r io.Reader) []string {
	sr := NewReader(r)
	var out []string
	for {
		var b bytes.Buffer
		err := sr.Next(&b)
		if err == io.EOF {
			if b.Len() > 0 {
				out = append(out, b.String())
			}
			return out
		}
		if err != nil {
			t.Fatalf("Next: %v", err)
		}
		out = append(out, b.String())
	}
}

// reference parses a whole stream the way the standard describes, with the
// same two choices as Reader: lines of data joined by a space, and an
// event cut short by the end of the stream kept.
func reference(in string) []string {
	in = strings.TrimPrefix(in, "\xEF\xBB\xBF")
	var out []string
	var data []string
	dispatch := func() {
		if len(data) > 0 {
			out = append(out, strings.Join(data, " "))
		}
		data = nil
	}
	for len(in) > 0 {
		i := strings.IndexAny(in, "\r\n")
		if i < 0 { // the last line, cut short
			if v, ok := strings.CutPrefix(in, "data:"); ok {
				data = append(data, strings.TrimPrefix(v, " "))
			}
			break
		}
		line := in[:i]
		if strings.HasPrefix(in[i:], "\r\n") {
			i++
		}
		in = in[i+1:]
		if line == "" {
			dispatch()
			continue
		}
		if strings.HasPrefix(line, ":") {
			continue
		}
		name, value, colon := strings.Cut(line, ":")
		if colon {
			value = strings.TrimPrefix(value, " ")
		}
		if name == "data" {
			data = append(data, value)
		}
	}
	if len(data) > 0 && strings.Join(data, " ") != "" {
		dispatch()
	}
	return out
}

func TestReader(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []string
	}{
		{"one", "data: {\"a\":1}\n\n", []string{`{"a":1}`}},
		{"keep-alive and comments", ":\n\n: hi\ndata: x\n\n:\n\n", []string{"x"}},
		{"fields skipped", "event: message\nid: 7\nretry: 10\ndata:y\n\n", []string{"y"}},
		{"lines joined", "data: {\"a\":\ndata: 1}\n\n", []string{`{"a": 1}`}},
		{"CRLF and CR", "data: a\r\n\r\ndata: b\r\rdata: c\n\n", []string{"a", "b", "c"}},
		{"BOM", "\xEF\xBB\xBFdata: a\n\n", []string{"a"}},
		{"no colon", "data\ndata: z\n\n", []string{" z"}},
		{"cut short", "data: a\n\ndata: {\"b\"", []string{"a", `{"b"`}},
		{"long field", "datadatadatadatadata: no\ndata: yes\n\n", []string{"yes"}},
		{"only one space taken", "data:  two\n\n", []string{" two"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, r := range []io.Reader{strings.NewReader(tc.in), iotest.OneByteReader(strings.NewReader(tc.in))} {
				if got := events(t, r); !equal(got, tc.want) {
					t.Errorf("events %q, want %q", got, tc.want)
				}
			}
		})
	}
}

// A line longer than the reader's buffer is passed on in pieces, never
// gathered.
func TestReaderStreamsLongData(t *testing.T) {
	big := strings.Repeat("x", 1<<20)
	sr := NewReader(strings.NewReader("data: " + big + "\n\n"))
	w := &maxWrite{}
	if err := sr.Next(w); err != nil {
		t.Fatal(err)
	}
	if w.n != len(big) || w.max > 32<<10 {
		t.Fatalf("%d bytes in writes of at most %d, want %d in writes no larger than the buffer", w.n, w.max, len(big))
	}
}

// An error of the writer is returned as it is.
func TestReaderWriterError(t *testing.T) {
	boom := errors.New("boom")
	err := NewReader(strings.NewReader("data: x\n\n")).Next(failWriter{boom})
	if err != boom {
		t.Fatalf("Next: %v, want the writer's error", err)
	}
}

type maxWrite struct{ n, max int }

func (w *maxWrite) Write(p []byte) (int, error) {
	w.n += len(p)
	w.max = max(w.max, len(p))
	return len(p), nil
}

type failWriter struct{ err error }

func (w failWriter) Write([]byte) (int, error) { return 0, w.err }

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
