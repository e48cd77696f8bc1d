package acpclient

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync/atomic"
	"testing"
	"time"
)

// benchLines returns n typical streamed-text notifications, one per line.
func benchLines(n int) [][]byte {
	words := []string{"Reading ", "the file ", "now; ", "it defines ", "`func main()` ", "and ", "two helpers.\n"}
	out := make([][]byte, n)
	for i := range out {
		out[i] = []byte(fmt.Sprintf(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess_01JD8X4","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":%q},"messageId":"msg_%d"}}}`+"\n", words[i%len(words)], i/50))
	}
	return out
}

// feed writes total lines from the pattern into w in large writes, as a
// pipe from a busy agent would deliver them.
func feed(w io.Writer, pattern [][]byte, total int) {
	var buf bytes.Buffer
	for i := 0; i < total; i++ {
		buf.Write(pattern[i%len(pattern)])
		if buf.Len() >= 64<<10 {
			w.Write(buf.Bytes())
			buf.Reset()
		}
	}
	w.Write(buf.Bytes())
}

type countingClient struct {
	n      atomic.Int64
	target int64
	done   chan struct{}
	text   int
}

func (c *countingClient) SessionUpdate(_ context.Context, n *SessionNotification) {
	if u, ok := n.Update.(*AgentMessageChunk); ok {
		c.text += len(u.Content.Text)
	}
	if c.n.Add(1) == c.target {
		close(c.done)
	}
}

func (c *countingClient) RequestPermission(_ context.Context, _ *RequestPermissionRequest, reply func(*RequestPermissionResponse, error)) {
	reply(PermissionCancelled(), nil)
}

type pipeStream struct {
	io.Reader
	io.Writer
	closer io.Closer
}

func (p pipeStream) Close() error { return p.closer.Close() }

// BenchmarkConnAgentMessageChunks measures agent_message_chunk notifications
// decoded and delivered, in order, to a Client through a Conn over an
// in-memory pipe. Compare msgs/s with BenchmarkFloorEnvelopeDecode.
func BenchmarkConnAgentMessageChunks(b *testing.B) {
	pattern := benchLines(1000)
	client := &countingClient{target: int64(b.N), done: make(chan struct{})}
	pr, pw := io.Pipe()
	c := NewConn(pipeStream{Reader: pr, Writer: io.Discard, closer: pr}, client, nil)
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	go feed(pw, pattern, b.N)
	<-client.done
	elapsed := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "msgs/s")
	pw.Close()
	<-c.Done()
}

// BenchmarkFloorEnvelopeDecode is the floor: a bare bufio loop that
// json.Unmarshals each line's JSON-RPC envelope, leaving params raw.
func BenchmarkFloorEnvelopeDecode(b *testing.B) {
	benchFloor(b, func(line []byte) error {
		var env struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Method  string          `json:"method"`
			Params  json.RawMessage `json:"params"`
		}
		return json.Unmarshal(line, &env)
	})
}

// BenchmarkFloorTypedDecode is a second reference: the same loop decoding
// each line fully into a typed struct, with no dispatch or ordering.
func BenchmarkFloorTypedDecode(b *testing.B) {
	benchFloor(b, func(line []byte) error {
		var m chunkLine
		return json.Unmarshal(line, &m)
	})
}

func benchFloor(b *testing.B, decode func([]byte) error) {
	pattern := benchLines(1000)
	pr, pw := io.Pipe()
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	go feed(pw, pattern, b.N)
	r := bufio.NewReaderSize(pr, 64<<10)
	for i := 0; i < b.N; i++ {
		line, err := r.ReadSlice('\n')
		if err != nil {
			b.Fatal(err)
		}
		if err := decode(line); err != nil {
			b.Fatal(err)
		}
	}
	elapsed := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "msgs/s")
	pw.Close()
}

// floodChunks is the size of one BenchmarkFlood round, as in issue 16.
const floodChunks = 200_000

// BenchmarkFlood delivers 200k streamed text chunks through a Conn and, in
// the same iteration, runs two floors over the same bytes fed the same way:
// a newline counter (the pipe limit, "x-pipe") and a typed encoding/json
// decode of each line ("x-typed"). Ratios above 1 are faster than the floor.
func BenchmarkFlood(b *testing.B) {
	pattern := benchLines(1000)
	var conn, pipe, typed time.Duration
	for b.Loop() {
		conn += floodConn(pattern)
		pipe += floodFloor(b, pattern, func([]byte) error { return nil })
		typed += floodFloor(b, pattern, func(line []byte) error {
			var m chunkLine
			return json.Unmarshal(line, &m)
		})
	}
	b.ReportMetric(pipe.Seconds()/conn.Seconds(), "x-pipe")
	b.ReportMetric(typed.Seconds()/conn.Seconds(), "x-typed")
	b.ReportMetric(conn.Seconds()/float64(b.N*floodChunks)*1e9, "ns/chunk")
}

func floodConn(pattern [][]byte) time.Duration {
	client := &countingClient{target: floodChunks, done: make(chan struct{})}
	pr, pw := io.Pipe()
	c := NewConn(pipeStream{Reader: pr, Writer: io.Discard, closer: pr}, client, nil)
	start := time.Now()
	go feed(pw, pattern, floodChunks)
	<-client.done
	elapsed := time.Since(start)
	pw.Close()
	<-c.Done()
	return elapsed
}

func floodFloor(b *testing.B, pattern [][]byte, decode func([]byte) error) time.Duration {
	pr, pw := io.Pipe()
	start := time.Now()
	go feed(pw, pattern, floodChunks)
	r := bufio.NewReaderSize(pr, 64<<10)
	for range floodChunks {
		line, err := r.ReadSlice('\n')
		if err != nil {
			b.Fatal(err)
		}
		if err := decode(line); err != nil {
			b.Fatal(err)
		}
	}
	elapsed := time.Since(start)
	pw.Close()
	return elapsed
}
