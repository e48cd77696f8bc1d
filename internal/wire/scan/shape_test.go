package scan

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"
)

// checkDecoder decodes line with d and checks the result is what the
// stateless full scan (no shapes, no slabs) makes of it: the same chunk,
// or for a lean decoder the same as a text delta when it is one. It
// reports whether one of d's shapes matched the line.
func checkDecoder(t *testing.T, d *Decoder, line []byte) (shaped bool) {
	t.Helper()
	for _, sh := range d.shapes {
		s := chunkScan{b: line}
		if sh != nil && sh.match(&s) {
			shaped = true
		}
	}
	var want, got Chunk
	wres := scanOnce(bytes.Clone(line), false, &want)
	gres := d.Decode(bytes.Clone(line), false, &got)
	switch {
	case gres != wres:
		t.Fatalf("line %q: decoder gave %d, full scan %d (shape matched: %v)", line, gres, wres, shaped)
	case gres == OK && got.Lean:
		if !d.Lean || want.ContentType != contentText || want.ContentMeta != nil || want.ParamsMeta != nil {
			t.Fatalf("line %q: a text delta, full scan %+v", line, want)
		}
		want.Lean = true
		sameChunk(t, line, &got, &want)
	case gres == OK:
		if d.Lean && want.ContentType == contentText && want.ContentMeta == nil && want.ParamsMeta == nil {
			t.Fatalf("line %q: a lean decoder did not make a text delta", line)
		}
		sameChunk(t, line, &got, &want)
	}
	if shaped && wres != OK {
		t.Fatalf("line %q matched a shape but the full scan gives %d", line, wres)
	}
	return shaped
}

// TestChunkShapeStream: once a decoder has seen a line, the lines that
// differ from it only in their session id, message id and text take the
// shape, with strings of every kind, and mean what the full scan says.
func TestChunkShapeStream(t *testing.T) {
	tmpls := []string{
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"S","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"T"},"messageId":"M"}}}`,
		`{"params":{"update":{"messageId":"M","content":{"text":"T","type":"text"},"sessionUpdate":"user_message_chunk"},"sessionId":"S"},"method":"session/update","jsonrpc":"2.0"}`,
		"  {\"jsonrpc\" : \"2.0\", \"method\":\"session/update\",\"params\":{ \"sessionId\" : \"S\" , \"update\" : { \"sessionUpdate\" : \"agent_thought_chunk\" , \"content\" : { \"type\" : \"text\" , \"text\" : \"T\" } } } }\r\n",
		`{"jsonrpc":"2.0","method":"session/update","params":{"update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"T"},"messageId":null}}}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"S","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text"}},"x":[1,{"y":"z"}]},"other":true}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"S","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"image","text":"T"}}}}`,
	}
	good := []string{"", "x", "sess_01JD8X4", "hello world", `a\nb`, `\u00e9\u4e16`, `\ud83d\ude00`, `\ud83d`, `\"\\\/\b\f\r\t`,
		"h\xc3\xa9llo", "\xff\xfe", "\xed\xa0\x80", `\u0000`, "\x7f", "\u2028", strings.Repeat("long text ", 50)}
	bad := []string{`\x`, "a\x01", `\u12`, `"`, `\`, "\n"}
	for _, tmpl := range tmpls {
		var d Decoder
		first := strings.NewReplacer("S", "s", "T", "t", "M", "m").Replace(tmpl)
		if checkDecoder(t, &d, []byte(first)) {
			t.Fatalf("a fresh decoder matched a shape")
		}
		if d.shapes[d.last] == nil {
			t.Fatalf("no shape learnt from %q", first)
		}
		for _, v := range good {
			line := strings.NewReplacer("S", v, "T", v+"!", "M", "m"+v).Replace(tmpl)
			if !checkDecoder(t, &d, []byte(line)) {
				t.Errorf("line %q did not take the shape of %q", line, first)
			}
		}
		for _, v := range bad {
			line := strings.NewReplacer("S", "s", "T", v, "M", "m").Replace(tmpl)
			if strings.Contains(tmpl, `"T"`) && checkDecoder(t, &d, []byte(line)) {
				t.Errorf("line %q with a bad string took the shape", line)
			}
		}
	}
}

// TestChunkShapeVaryingMeta: a chunk's _meta is a variable of its shape,
// so a stream whose _meta changes with every chunk (a counter, a
// timestamp) takes one shape, for values of every kind; a value that is
// not JSON, or leaves the line, never takes it.
func TestChunkShapeVaryingMeta(t *testing.T) {
	tmpls := []string{
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","_meta":X,"content":{"type":"text","text":"t"}}}}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{"update":{"content":{"type":"text","text":"t"},"sessionUpdate":"agent_thought_chunk","messageId":"m","_meta": X},"sessionId":"s"}}`,
	}
	good := []string{`{"seq":2}`, `{"seq":3,"at":"2026-12-01T10:00:00Z"}`, `{}`, `[1,{"a":[]}]`, `"s"`, `"\u00e9\""`, `12.5e3`, `null`, `true`, ` { "a" : 1 }`}
	bad := []string{`{`, `{"a":}`, `{"a":1}}`, `"open`, `1 2`, `{"a":1},"sessionUpdate":"tool_call"`, `{"x":"\q"}`}
	for _, lean := range []bool{false, true} {
		for _, tmpl := range tmpls {
			d := Decoder{Lean: lean}
			if checkDecoder(t, &d, []byte(strings.Replace(tmpl, "X", `{"seq":1}`, 1))) {
				t.Fatalf("a fresh decoder matched a shape")
			}
			for _, v := range good {
				line := strings.Replace(tmpl, "X", v, 1)
				if !checkDecoder(t, &d, []byte(line)) {
					t.Errorf("line %s did not take the shape", line)
				}
			}
			for _, v := range bad {
				line := strings.Replace(tmpl, "X", v, 1)
				for _, sh := range d.shapes {
					if s := (chunkScan{b: []byte(line)}); sh != nil && sh.match(&s) {
						t.Errorf("line %s took a shape", line)
					}
				}
				checkDecoder(t, &d, []byte(line))
			}
		}
	}
}

// TestChunkShapeBreakouts: strings that end early and continue the line
// with other keys or values never take the shape unless the line as a
// whole is one the shape describes.
func TestChunkShapeBreakouts(t *testing.T) {
	tmpl := `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"T"},"messageId":"m"}}}`
	var d Decoder
	checkDecoder(t, &d, []byte(strings.Replace(tmpl, "T", "first", 1)))
	for _, v := range []string{
		`x","type":"image`, `x","text":"y`, `x","Text":"y`, `x"},"sessionUpdate":"tool_call","content":{"text":"y`,
		`x"},"messageId":"m"}},"id":1,"x":{"a":{"b":"`, `x"},"messageId":"m"}}}`, `x"},"messageId":"m"}}}{"a":"`,
		`x"},"_meta":{"a":"`, `x"},"messageId":"`,
	} {
		line := strings.Replace(tmpl, "T", v, 1)
		checkDecoder(t, &d, []byte(line))
	}
}

// TestChunkShapeRandomLines learns shapes from random lines and decodes
// random lines and their variants with them, checking every result against
// the full scan.
func TestChunkShapeRandomLines(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	n := 20000
	if testing.Short() || raceEnabled {
		n = 4000
	}
	var d Decoder
	lean := Decoder{Lean: true}
	shaped := 0
	for range n {
		line := randomChunkLine(rng)
		checkDecoder(t, &d, line)
		checkDecoder(t, &lean, line)
		// The same line with one of its strings changed, as the next chunk
		// of a stream would be.
		for _, w := range []string{`"x"`, `"hello world"`, `"msg_1"`} {
			if i := bytes.Index(line, []byte(w)); i >= 0 {
				v := bytes.Clone(line)
				v = append(v[:i:i], append([]byte(`"changed \u00e9"`), line[i+len(w):]...)...)
				if checkDecoder(t, &d, v) {
					shaped++
				}
				checkDecoder(t, &lean, v)
			}
		}
	}
	t.Logf("%d lines, %d variants took a shape", n, shaped)
	if shaped < n/20 {
		t.Errorf("only %d variants of %d lines took a shape: the generator or the shapes are off", shaped, n)
	}
}

// TestChunkShapeArena: chunks copied into a shared slab keep their own
// bytes: later chunks do not change earlier ones, and a line too large for
// the slab gets its own copy.
func TestChunkShapeArena(t *testing.T) {
	var d Decoder
	var got []Chunk
	var want []string
	for i := range 300 {
		text := strings.Repeat("y", i%40)
		if i == 150 {
			text = strings.Repeat("big", arenaSlabSize/2)
		}
		buf := []byte(chunkLineJSON("s", text))
		var in Chunk
		if d.Decode(buf, false, &in) != OK {
			t.Fatalf("line %d declined", i)
		}
		for j := range buf {
			buf[j] = 'Z' // the read buffer is reused
		}
		got, want = append(got, in), append(want, text)
	}
	for i, in := range got {
		if txt := in.Text; txt != want[i] {
			t.Fatalf("chunk %d has text %.40q, want %.40q", i, txt, want[i])
		}
	}
}

// FuzzChunkShape learns a shape from one line and decodes another with
// it, and the second inserted into the first's strings, checking every
// result against the full scan.
func FuzzChunkShape(f *testing.F) {
	f.Add(benchLines(1)[0], []byte("plain"))
	f.Add([]byte(chunkLineJSON("s", "x")), []byte(`x"},"messageId":"m`))
	f.Add([]byte(`{"jsonrpc":"2.0","method":"session/update","params":{"update":{"sessionUpdate":"agent_thought_chunk","content":{"type":"text","text":"T"},"messageId":null}}}`), []byte(`\ud83d`))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		for _, lean := range []bool{false, true} {
			d := Decoder{Lean: lean}
			checkDecoder(t, &d, a)
			checkDecoder(t, &d, b)
			for _, tmpl := range []string{
				`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"%","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"%"},"messageId":"%"}}}`,
				`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"%"}}}}`,
			} {
				checkDecoder(t, &d, []byte(strings.ReplaceAll(tmpl, "%", "a")))
				checkDecoder(t, &d, []byte(strings.ReplaceAll(tmpl, "%", string(b))))
			}
		}
	})
}

// BenchmarkChunkShape compares, on the flood's lines and in the same
// iteration, a connection's decoder against the stateless full scan:
// "scan" only recognises and validates each line (a shape's match against
// the scanner's walk), "decode" builds each chunk as well (the decoder's
// strings in its slabs, the full scan's referring into a copy of the
// params). Each reports the full scan's time over the decoder's.
func BenchmarkChunkShape(b *testing.B) {
	lines := benchLines(1000)
	b.Run("scan", func(b *testing.B) {
		var d Decoder
		var c Chunk
		d.Decode(lines[0], false, &c) // learn the shape
		sh := d.shapes[d.last]
		benchPair(b, len(lines), func() {
			for _, l := range lines {
				s := chunkScan{b: l}
				if !sh.match(&s) {
					b.Fatal("no match")
				}
			}
		}, func() {
			for _, l := range lines {
				s := chunkScan{b: l}
				s.ws()
				if !s.envelope() {
					b.Fatal("declined")
				}
			}
		})
	})
	b.Run("decode", func(b *testing.B) {
		var d Decoder
		var c Chunk
		benchPair(b, len(lines), func() {
			for _, l := range lines {
				if d.Decode(l, false, &c) != OK {
					b.Fatal("declined")
				}
			}
		}, func() {
			for _, l := range lines {
				if scanOnce(l, false, &c) != OK {
					b.Fatal("declined")
				}
			}
		})
	})
}

// benchPair runs ours and floor in turn every iteration and reports the
// floor's time over ours ("x-fullscan") and our time per line.
func benchPair(b *testing.B, lines int, ours, floor func()) {
	var o, f time.Duration
	for b.Loop() {
		start := time.Now()
		ours()
		mid := time.Now()
		floor()
		o, f = o+mid.Sub(start), f+time.Since(mid)
	}
	b.ReportMetric(f.Seconds()/o.Seconds(), "x-fullscan")
	b.ReportMetric(float64(o.Nanoseconds())/float64(b.N*lines), "ns/line")
}

// TestChunkShapeReusesEvictedShapes: lines whose skeleton changes every
// time (a counter in _meta) each make a shape; the shape they replace
// gives its memory, so learning allocates nothing, and the shapes still
// decode what they learned.
func TestChunkShapeReusesEvictedShapes(t *testing.T) {
	var d Decoder
	line := func(i int) []byte {
		return []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","_meta":{"n":` + strconv.Itoa(i) +
			`},"update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"t` + strconv.Itoa(i) + `"}}}}`)
	}
	lines := make([][]byte, 300)
	for k := range lines {
		lines[k] = line(1_000_000 + k + 1)
	}
	i := 0
	decode := func() {
		i++
		var in Chunk
		if d.Decode(lines[i-1], false, &in) != OK {
			t.Fatalf("line %d declined", i)
		}
		if got, want := in.Text, "t"+strconv.Itoa(1_000_000+i); got != want {
			t.Fatalf("line %d decoded text %q, want %q", i, got, want)
		}
	}
	for range chunkShapes * 2 {
		decode() // every slot holds a shape
	}
	// A line of a learned shape costs 2 allocations here (its box and its
	// text) and the full scan of a new one 2 more; making its shape took 2
	// more again before the evicted shape's memory was reused.
	if allocs := testing.AllocsPerRun(200, decode); !raceEnabled && allocs > 4 {
		t.Errorf("%.1f allocations per line of a new shape, want at most 4 (the evicted shape's memory reused)", allocs)
	}
}

// TestChunkShapesStayWhileInUse: a stream that uses as many shapes as the
// decoder holds, or fewer, in any order, takes a full scan for the first
// line of each and matches from then on: a new shape replaces the one
// least recently used, never one the stream still uses.
func TestChunkShapesStayWhileInUse(t *testing.T) {
	forms := []string{
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","messageId":"m","content":{"type":"text","text":"T"}}}}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{"update":{"content":{"text":"T","type":"text"},"sessionUpdate":"agent_message_chunk"},"sessionId":"s"}}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_thought_chunk","content":{"type":"text","text":"T"}}}}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"user_message_chunk","content":{"type":"text","text":"T"}}}}`,
	}
	for _, order := range [][]int{{0, 1, 0, 2}, {0, 1, 2, 3}, {0, 0, 1, 2, 1, 0, 3, 3, 2}, {3, 2, 1, 0, 1, 2}} {
		var d Decoder
		seen := map[int]bool{}
		for i := range 10 * len(order) {
			f := order[i%len(order)]
			line := strings.Replace(forms[f], "T", "text "+strconv.Itoa(i), 1)
			if shaped := checkDecoder(t, &d, []byte(line)); shaped != seen[f] {
				t.Fatalf("order %v, line %d (form %d): took a shape %v, want %v", order, i, f, shaped, seen[f])
			}
			seen[f] = true
		}
	}
}

// TestShapedChunksCopyOnlyTheirText: a chunk that takes a shape keeps its
// text and no more of its line (the shape gives RawUpdate the rest back),
// and shares its session and message ids with the chunk before it, while
// every chunk keeps its own text after the read buffer is reused.
func TestShapedChunksCopyOnlyTheirText(t *testing.T) {
	var d Decoder
	line := func(i int) []byte {
		return []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess_01JD8X4QW3","update":{"sessionUpdate":"agent_message_chunk","messageId":"msg_01JD8X4QW3","content":{"type":"text","text":"chunk ` +
			strconv.Itoa(1000+i) + ` "}}}}`)
	}
	const n = 4000
	ins, before, after := decodeReadBuffer(t, &d, n, line)
	// A chunk keeps its 11 bytes of text; keeping its params instead
	// would add about 150.
	if perLine := float64(after.TotalAlloc-before.TotalAlloc) / n; !raceEnabled && perLine > 60 {
		t.Errorf("%.0f bytes allocated per chunk, want its text's 11 and little more", perLine)
	}
	for i := range ins {
		c := &ins[i]
		if want := "chunk " + strconv.Itoa(1000+i) + " "; c.Text != want {
			t.Fatalf("chunk %d: text %q, want %q", i, c.Text, want)
		}
		if i > 1 {
			p := &ins[i-1]
			if unsafe.StringData(c.SessionID) != unsafe.StringData(p.SessionID) ||
				unsafe.StringData(c.MessageID) != unsafe.StringData(p.MessageID) {
				t.Fatalf("chunk %d copied the session or message id the chunk before had", i)
			}
		}
	}
}

// A chunk whose text has escapes is decoded into the arena: it costs no
// allocation of its own, where a string builder growing from nothing took
// two or three per chunk.
func TestEscapedChunksDecodeIntoTheArena(t *testing.T) {
	for _, lean := range []bool{false, true} {
		t.Run(fmt.Sprintf("lean=%v", lean), func(t *testing.T) {
			d := Decoder{Lean: lean}
			line := func(i int) []byte {
				return []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"line \"` +
					strconv.Itoa(i) + `\"\n\u00e9\ud83d\ude00 \\ done"}}}}`)
			}
			const n = 4000
			ins, before, after := decodeReadBuffer(t, &d, n, line)
			// The arena's slabs are a few allocations in all.
			if perLine := float64(after.Mallocs-before.Mallocs) / n; !raceEnabled && perLine > 0.2 {
				t.Errorf("%.2f allocations per escaped chunk, want a few slabs in all", perLine)
			}
			for i, in := range ins {
				want := "line \"" + strconv.Itoa(i) + "\"\né😀 \\ done"
				var got string
				if in.Lean != lean {
					t.Fatalf("chunk %d: lean %v, want %v", i, in.Lean, lean)
				}
				got = in.Text
				if got != want {
					t.Fatalf("chunk %d: text %q, want %q", i, got, want)
				}
			}
		})
	}
}

// decodeReadBuffer decodes lines 0 to n-1 with d from one read buffer,
// cleared after each as a connection's is reused, and returns what they
// decoded to and the memory statistics around the decoding alone.
func decodeReadBuffer(t *testing.T, d *Decoder, n int, line func(int) []byte) (ins []Chunk, before, after runtime.MemStats) {
	t.Helper()
	lines := make([][]byte, n)
	for i := range lines {
		lines[i] = line(i)
	}
	buf := make([]byte, 0, 256)
	ins = make([]Chunk, n)
	runtime.ReadMemStats(&before)
	for i := range n {
		buf = append(buf[:0], lines[i]...)
		if d.Decode(buf, false, &ins[i]) != OK {
			t.Fatalf("line %d declined", i)
		}
		clear(buf)
	}
	runtime.ReadMemStats(&after)
	return ins, before, after
}
