package acpclient

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"testing"
)

// blockedClient holds the dispatcher in its first SessionUpdate until
// release is closed, so that everything after it stays queued.
type blockedClient struct{ release chan struct{} }

func (c blockedClient) SessionUpdate(context.Context, *SessionNotification) { <-c.release }
func (c blockedClient) RequestPermission(_ context.Context, _ *RequestPermissionRequest, reply func(*RequestPermissionResponse, error)) {
	reply(PermissionCancelled(), nil)
}

// What the queue charges for a message covers the memory it holds while
// queued (the budgets bound memory, not line bytes): for streamed chunks,
// tool calls and updates of the general path alike, the heap that queued
// lines hold is within what they were charged.
func TestQueuedSizeCoversWhatAMessageHolds(t *testing.T) {
	lines := map[string]string{
		"chunk": `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","messageId":"m1","content":{"type":"text","text":"chunk %d "}}}}`,
		"tool":  `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"t%d","title":"Read file","kind":"read","status":"in_progress"}}}`,
		"plan":  `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"plan","entries":[{"content":"step %d","priority":"high","status":"pending"}]}}}`,
	}
	for name, pattern := range lines {
		t.Run(name, func(t *testing.T) {
			release := make(chan struct{})
			pr, pw := io.Pipe()
			c := NewConn(pipeStream{Reader: pr, Writer: io.Discard, closer: pr}, blockedClient{release}, nil)
			defer func() {
				close(release)
				pw.Close()
				<-c.Done()
			}()
			c.handleLine([]byte(fmt.Sprintf(pattern, 0))) // taken by the dispatcher, which then waits
			c.flushBatch()                                // as the read loop does with nothing more buffered
			const n = 5000
			queued := make([][]byte, n)
			for i := range queued {
				queued[i] = []byte(fmt.Sprintf(pattern, i+1))
			}
			before := heapInUse()
			for _, line := range queued {
				c.handleLine(line)
			}
			c.flushBatch()
			held := heapInUse() - before
			c.queue.mu.Lock()
			charged, waiting := c.queue.bytes, len(c.queue.items)-c.queue.head
			c.queue.mu.Unlock()
			if waiting < n {
				t.Fatalf("%d messages queued, want %d", waiting, n)
			}
			if charged < held {
				t.Errorf("%d queued %s lines hold %d bytes of heap, charged %d", n, name, held, charged)
			}
			runtime.KeepAlive(queued)
		})
	}
}

func heapInUse() int {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int(ms.HeapAlloc)
}
