package acpclient

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"runtime"
	"testing"
)

// idleAgent answers initialize and session/new, then waits, reading with a
// tiny buffer so that its own share of the heap stays small.
func idleAgent(conn net.Conn) {
	serveRequests(bufio.NewReaderSize(conn, 16), func(id json.RawMessage, method string) {
		switch method {
		case "initialize":
			fmt.Fprintf(conn, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":1,"agentCapabilities":{}}}`+"\n", id)
		case "session/new":
			fmt.Fprintf(conn, `{"jsonrpc":"2.0","id":%s,"result":{"sessionId":"s"}}`+"\n", id)
		}
	})
}

// BenchmarkIdleConn opens 100 Conns over in-memory pipes, each initialized
// with a session open, and reports the heap and goroutine stacks each holds
// once idle ("heap-B/conn", "stack-B/conn"; the agent side's share, a
// goroutine and a 16-byte buffer, included).
func BenchmarkIdleConn(b *testing.B) {
	const n = 100
	var heap, stack float64
	for b.Loop() {
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		conns := make([]*Conn, n)
		for i := range conns {
			ct, at := NewInMemoryTransports()
			go idleAgent(at.Stream.(net.Conn))
			c, err := Connect(context.Background(), ct, &countingClient{}, nil)
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			if _, err := c.Initialize(ctx, nil); err != nil {
				b.Fatal(err)
			}
			if _, err := c.NewSession(ctx, &NewSessionRequest{Cwd: "/"}); err != nil {
				b.Fatal(err)
			}
			conns[i] = c
		}
		runtime.GC()
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		heap += float64(after.HeapAlloc-before.HeapAlloc) / n
		stack += float64(after.StackInuse-before.StackInuse) / n
		for _, c := range conns {
			c.Close()
			<-c.Done()
		}
	}
	b.ReportMetric(heap/float64(b.N), "heap-B/conn")
	b.ReportMetric(stack/float64(b.N), "stack-B/conn")
}
