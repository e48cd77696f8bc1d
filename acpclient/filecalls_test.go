package acpclient

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acphost/acphost/internal/waitfor"
)

// slowFiles is a file root whose calls wait until released, like an SFTP
// root on a slow link. It keeps files in memory.
type slowFiles struct {
	*recorder
	release chan struct{} // closed to let calls finish
	started chan string   // method and path of each call as it starts
	mu      sync.Mutex
	files   map[string]string
	running atomic.Int32
	most    atomic.Int32 // most calls running at once
	order   []string     // calls in the order they finished
}

func newSlowFiles() *slowFiles {
	return &slowFiles{recorder: newRecorder(), release: make(chan struct{}), started: make(chan string, 64), files: map[string]string{}}
}

func (f *slowFiles) enter(what string) {
	n := f.running.Add(1)
	for {
		most := f.most.Load()
		if n <= most || f.most.CompareAndSwap(most, n) {
			break
		}
	}
	f.started <- what
}

func (f *slowFiles) leave(what string) {
	f.mu.Lock()
	f.order = append(f.order, what)
	f.mu.Unlock()
	f.running.Add(-1)
}

func (f *slowFiles) ReadTextFile(ctx context.Context, req *ReadTextFileRequest) (*ReadTextFileResponse, error) {
	f.enter("read " + req.Path)
	defer f.leave("read " + req.Path)
	select {
	case <-f.release:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return &ReadTextFileResponse{Content: f.files[req.Path]}, nil
}

func (f *slowFiles) WriteTextFile(ctx context.Context, req *WriteTextFileRequest) error {
	f.enter("write " + req.Path)
	defer f.leave("write " + req.Path)
	select {
	case <-f.release:
	case <-ctx.Done():
		return ctx.Err()
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.files[req.Path] = req.Content
	return nil
}

func (f *slowFiles) waitStarted(t *testing.T, want string) {
	t.Helper()
	select {
	case got := <-f.started:
		if got != want {
			t.Fatalf("call started: %q, want %q", got, want)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("%s never started", want)
	}
}

// TestSlowFileReadDoesNotDelayUpdates checks that an update the agent sends
// after a file read is delivered while the read is still being served.
func TestSlowFileReadDoesNotDelayUpdates(t *testing.T) {
	f := newSlowFiles()
	f.files["/a"] = "text of a"
	c, p := newPair(t, f, nil)
	p.handshake(c, fullCaps)
	p.send(`{"jsonrpc":"2.0","id":1,"method":"fs/read_text_file","params":{"sessionId":"s","path":"/a"}}`)
	f.waitStarted(t, "read /a")
	p.send(chunkLineJSON("s", "meanwhile"))
	if got := textOf(t, f.waitUpdates(t, 1)[0]); got != "meanwhile" {
		t.Fatalf("update %q", got)
	}
	close(f.release)
	m := p.recv()
	var resp ReadTextFileResponse
	if string(m.ID) != "1" || m.Error != nil || json.Unmarshal(m.Result, &resp) != nil || resp.Content != "text of a" {
		t.Fatalf("read answered %s", m.line)
	}
}

// TestFileCallsKeepTheAgentsOrder checks that file calls the agent sends
// without waiting for their answers are served one at a time, in its
// order: a read after a write of the same file sees the write, and a slow
// root costs one goroutine, not one per call.
func TestFileCallsKeepTheAgentsOrder(t *testing.T) {
	f := newSlowFiles()
	f.files["/a"] = "old"
	c, p := newPair(t, f, nil)
	p.handshake(c, fullCaps)
	p.send(`{"jsonrpc":"2.0","id":1,"method":"fs/write_text_file","params":{"sessionId":"s","path":"/a","content":"new"}}`)
	f.waitStarted(t, "write /a")
	p.send(`{"jsonrpc":"2.0","id":2,"method":"fs/read_text_file","params":{"sessionId":"s","path":"/a"}}`)
	for i := range 20 {
		p.sendf(`{"jsonrpc":"2.0","id":%d,"method":"fs/read_text_file","params":{"sessionId":"s","path":"/b%d"}}`, 3+i, i)
	}
	// Once this update is delivered, every call before it has been passed on.
	p.send(chunkLineJSON("s", "after the calls"))
	f.waitUpdates(t, 1)
	if n := f.running.Load(); n != 1 {
		t.Fatalf("%d file calls running at once while the root is slow, want 1", n)
	}
	close(f.release)
	for want := 1; want <= 22; want++ {
		m := p.recv()
		if string(m.ID) != fmt.Sprint(want) || m.Error != nil {
			t.Fatalf("answer %d: %s", want, m.line)
		}
		if want == 2 {
			var resp ReadTextFileResponse
			if json.Unmarshal(m.Result, &resp) != nil || resp.Content != "new" {
				t.Fatalf("read after the write answered %s", m.line)
			}
		}
	}
	if most := f.most.Load(); most != 1 {
		t.Fatalf("up to %d file calls ran at once, want 1", most)
	}
}

// fileThenUpdate is slowFiles whose calls are released by the next update,
// which the agent sends after answering the prompt.
type fileThenUpdate struct{ *slowFiles }

func (f fileThenUpdate) SessionUpdate(ctx context.Context, n *SessionNotification) {
	f.slowFiles.SessionUpdate(ctx, n)
	close(f.release)
}

// TestPromptReturnsAfterEarlierFileCalls checks that Prompt's promise,
// every message the agent sent before its answer has been delivered, covers
// a file call still being served when the answer arrives.
func TestPromptReturnsAfterEarlierFileCalls(t *testing.T) {
	f := fileThenUpdate{newSlowFiles()}
	c, p := newPair(t, f, nil)
	p.handshake(c, fullCaps)
	done := make(chan []string, 1)
	go func() {
		_, err := c.Prompt(waitfor.Context(t), &PromptRequest{SessionID: "s", Prompt: []ContentBlock{TextBlock("hi")}})
		if err != nil {
			t.Error(err)
		}
		f.mu.Lock()
		done <- append([]string(nil), f.order...)
		f.mu.Unlock()
	}()
	m := p.recv()
	p.send(`{"jsonrpc":"2.0","id":"w","method":"fs/write_text_file","params":{"sessionId":"s","path":"/a","content":"x"}}`)
	f.waitStarted(t, "write /a")
	p.sendf(`{"jsonrpc":"2.0","id":%s,"result":{"stopReason":"end_turn"}}`, m.ID)
	p.send(chunkLineJSON("s", "late"))
	// The answer goes out through a pipe without a buffer: read it first.
	if m := p.recv(); string(m.ID) != `"w"` || m.Error != nil {
		t.Fatalf("write answered %s", m.line)
	}
	if order := waitfor.Recv(t, done, "the call to return"); len(order) != 1 {
		t.Fatalf("Prompt returned before the write sent ahead of its answer was served (served: %v)", order)
	}
}

// TestQueueCountsHandedOffMessagesWhenAnswered checks the queue's count of
// delivered messages: a handed-off message holds it back until answered,
// however many later ones are done.
func TestQueueCountsHandedOffMessagesWhenAnswered(t *testing.T) {
	q := newQueue(1<<20, nil)
	msgs := make([]*inbound, 3)
	for i := range msgs {
		msgs[i] = &inbound{size: 10}
		q.push(msgs[i])
	}
	for range msgs {
		q.pop()
	}
	q.handOff(msgs[0])
	q.done(msgs[1])
	q.done(msgs[2])
	first, all := q.reached(1), q.reached(3)
	select {
	case <-first:
		t.Fatal("a handed-off message counted as delivered before it was answered")
	case <-all:
		t.Fatal("later messages counted past an unanswered one")
	default:
	}
	q.finishLater(msgs[0])
	waitfor.Closed(t, first, "first")
	waitfor.Closed(t, all, "all")
	if q.bytes != 0 {
		t.Fatalf("%d bytes still counted", q.bytes)
	}
}

// TestFileCallCancelledByTheAgent checks that $/cancel_request for a file
// call being served answers -32800 and cancels the call's context.
func TestFileCallCancelledByTheAgent(t *testing.T) {
	f := newSlowFiles()
	c, p := newPair(t, f, nil)
	p.handshake(c, fullCaps)
	p.send(`{"jsonrpc":"2.0","id":4,"method":"fs/read_text_file","params":{"sessionId":"s","path":"/a"}}`)
	f.waitStarted(t, "read /a")
	p.send(`{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":4}}`)
	if m := p.recv(); string(m.ID) != "4" || m.Error == nil || m.Error.Code != CodeRequestCancelled {
		t.Fatalf("got %s, want -32800 for id 4", m.line)
	}
	// The cancelled call ends (its context is done), and the next one runs.
	p.send(`{"jsonrpc":"2.0","id":5,"method":"fs/read_text_file","params":{"sessionId":"s","path":"/b"}}`)
	f.waitStarted(t, "read /b")
	close(f.release)
	if m := p.recv(); string(m.ID) != "5" || m.Error != nil {
		t.Fatalf("next read answered %s", m.line)
	}
}
