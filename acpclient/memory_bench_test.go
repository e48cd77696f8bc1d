package acpclient

import (
	"bytes"
	"context"
	"io"
	"runtime"
	"strings"
	"testing"
)

// peakClient records the heap in use when the big chunk is delivered.
type peakClient struct {
	done chan struct{}
	heap uint64
	text int
}

func (c *peakClient) SessionUpdate(_ context.Context, n *SessionNotification) {
	if u, ok := n.Update.(*AgentMessageChunk); ok {
		c.text = len(u.Content.Text)
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	c.heap = ms.HeapAlloc
	close(c.done)
}

func (c *peakClient) RequestPermission(_ context.Context, _ *RequestPermissionRequest, reply func(*RequestPermissionResponse, error)) {
	reply(PermissionCancelled(), nil)
}

// BenchmarkBigChunkMemory delivers one agent_message_chunk line of
// ACPHOST_BENCH_MIB (default 50; the case is 100) MiB and reports
// the peak heap over the idle heap, in multiples of the line's size
// ("x-line-peak", from runtime.MemStats' total allocation and the heap
// still live at delivery: "x-line-live").
func BenchmarkBigChunkMemory(b *testing.B) {
	size := replayMiB() << 20
	text := strings.Repeat("0123456789abcdef", size/16)
	line := []byte(chunkPrefix + `{"type":"text","text":"` + text + `"}}}}` + "\n")
	var live, total float64
	for b.Loop() {
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		client := &peakClient{done: make(chan struct{})}
		c := NewConn(pipeStream{Reader: bytes.NewReader(line), Writer: io.Discard, closer: io.NopCloser(nil)}, client, nil)
		<-client.done
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		if client.text != len(text) {
			b.Fatalf("text of %d bytes, want %d", client.text, len(text))
		}
		live += float64(client.heap-before.HeapAlloc) / float64(len(line))
		total += float64(after.TotalAlloc-before.TotalAlloc) / float64(len(line))
		c.Close()
		<-c.Done()
	}
	b.ReportMetric(live/float64(b.N), "x-line-live")
	b.ReportMetric(total/float64(b.N), "x-line-alloc")
}
