package acpclient

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/acphost/acphost/internal/waitfor"
)

// TestLineReaderGrows: an idle reader holds only the small buffer; a long
// line moves it to the full-size buffer, and every line arrives whole and in
// order across the moves, however the bytes are split into reads.
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
		if len(r.buf) != firstBufferSize || r.big != nil {
			t.Fatalf("%s: buffer of %d bytes before any read, want %d", name, len(r.buf), firstBufferSize)
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
			if i == 0 && r.big != nil {
				t.Fatalf("%s: grew after one short line", name)
			}
			if i == 7 && name == "long line first" && (r.big == nil || r.lineOwned()) {
				t.Fatalf("%s: line 7 not read through the full-size buffer", name)
			}
		}
		if _, err := r.next(); err != io.EOF {
			t.Fatalf("%s: after the last line: %v, want EOF", name, err)
		}
		if r.big != nil || len(r.buf) != firstBufferSize {
			t.Errorf("%s: buffer of %d bytes at the end, want the small one back", name, len(r.buf))
		}
	}
}

// TestLineReaderGivesBackBetweenBursts: a burst of output is read through
// the full-size buffer, and whenever the reader waits for more with nothing
// buffered it holds only the small one.
func TestLineReaderGivesBackBetweenBursts(t *testing.T) {
	src := &bursts{t: t}
	var want []string
	for b := range 3 {
		var burst bytes.Buffer
		for i := range 500 {
			l := fmt.Sprintf("burst %d line %d %s.", b, i, strings.Repeat("y", i%150))
			want = append(want, l)
			burst.WriteString(l + "\n")
		}
		src.data = append(src.data, burst.Bytes())
	}
	r := newLineReader(src, 1<<20)
	src.r = r
	for i, w := range want {
		line, err := r.next()
		if err != nil || string(line) != w {
			t.Fatalf("line %d: %.40q, %v; want %.40q", i, line, err, w)
		}
	}
	if _, err := r.next(); err != io.EOF {
		t.Fatalf("after the last line: %v, want EOF", err)
	}
	if src.waits != 3 || src.bigReads < 3 {
		t.Fatalf("%d waits, %d reads into the full-size buffer; want 3 and at least one per burst", src.waits, src.bigReads)
	}
}

// bursts serves its bursts in reads as large as asked; the read after a
// burst stands for the wait for the next, and checks what r holds then.
type bursts struct {
	t        *testing.T
	r        *lineReader
	data     [][]byte
	waiting  bool
	waits    int
	bigReads int
}

func (s *bursts) Read(p []byte) (int, error) {
	if s.waiting {
		s.waits++
		s.waiting = false
		if s.r.big != nil || s.r.r != s.r.w {
			s.t.Errorf("wait %d: holding the full-size buffer (%d bytes buffered)", s.waits, s.r.w-s.r.r)
		}
		s.data = s.data[1:]
	}
	if len(s.data) == 0 {
		return 0, io.EOF
	}
	if len(p) > firstBufferSize {
		s.bigReads++
	}
	n := copy(p, s.data[0])
	s.data[0] = s.data[0][n:]
	if len(s.data[0]) == 0 {
		s.waiting = true
		return n, nil
	}
	return n, nil
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

// TestLineReaderParks: parked while it waits for queue room, the reader
// holds no full-size buffer, whether what it buffered fits the small buffer
// or not, unless it buffered more than a quarter of it, and the lines go on
// whole and in order after (what lineBuffered found before the park
// included).
func TestLineReaderParks(t *testing.T) {
	var want []string
	var in bytes.Buffer
	for i := range 3000 {
		l := fmt.Sprintf("line %d %s.", i, strings.Repeat("z", i%300))
		want = append(want, l)
		in.WriteString(l + "\n")
	}
	r := newLineReader(&in, 1<<20)
	parks := map[string]int{} // by where what was buffered stayed
	for i, w := range want {
		line, err := r.next()
		if err != nil || string(line) != w {
			t.Fatalf("line %d: %.40q, %v; want %.40q", i, line, err, w)
		}
		r.lineBuffered() // as the read loop asks after each line, before it may park
		if i%50 == 0 && r.big != nil {
			buffered := r.w - r.r
			r.park()
			kept := buffered > lineBufferSize/4
			if (r.big != nil) != kept || r.w-r.r != buffered {
				t.Fatalf("after park at line %d: full-size buffer held %v, %d bytes buffered; want it held %v, %d bytes buffered",
					i, r.big != nil, r.w-r.r, kept, buffered)
			}
			switch {
			case kept:
				parks["full-size"]++
			case buffered <= firstBufferSize:
				parks["small"]++
			default:
				parks["its own"]++
			}
		}
	}
	if _, err := r.next(); err != io.EOF {
		t.Fatalf("after the last line: %v, want EOF", err)
	}
	if len(parks) != 3 {
		t.Fatalf("parks %v: want every kind", parks)
	}
}

// TestQueuePushParksBeforeWaiting: a push that must wait for room runs
// onWait first, on the pushing goroutine; one that need not, does not.
func TestQueuePushParksBeforeWaiting(t *testing.T) {
	q := newQueue(100, nil)
	waits := 0
	q.onWait = func() { waits++ }
	q.push(&inbound{size: 80})
	if waits != 0 {
		t.Fatalf("onWait ran %d times for a push with room", waits)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		q.push(&inbound{size: 80})
	}()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		q.mu.Lock()
		n := waits
		q.mu.Unlock()
		if n > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the push that must wait did not run onWait")
		}
	}
	m, _ := q.pop()
	q.releaseBytes(m, false)
	waitfor.Closed(t, done, "the call to return")
}

// push appends m, as pushRun does a run of one (the read loop pushes runs).
func (q *queue) push(m *inbound) {
	q.pushRun([]*inbound{m})
}
