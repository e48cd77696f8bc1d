package acpclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/acphost/acphost/internal/waitfor"
)

// A request is one line, encoded once: the envelope's fields first, params
// in place and left out when there are none.
func TestRequestIsOneLine(t *testing.T) {
	c, p := newPair(t, newRecorder(), nil)
	errc := make(chan error, 2)
	go func() { errc <- c.Call(context.Background(), "x/ping", nil, nil) }()
	m := p.recv()
	if got, want := string(m.line), `{"jsonrpc":"2.0","id":1,"method":"x/ping"}`+"\n"; got != want {
		t.Errorf("request without params is\n%s want\n%s", got, want)
	}
	p.sendf(`{"jsonrpc":"2.0","id":%s,"result":{}}`, m.ID)
	if err := waitfor.Recv(t, errc, "the call to return its error"); err != nil {
		t.Fatal(err)
	}
	go func() { errc <- c.Call(context.Background(), "x/echo", map[string]int{"n": 7}, nil) }()
	m = p.recv()
	if got, want := string(m.line), `{"jsonrpc":"2.0","id":2,"method":"x/echo","params":{"n":7}}`+"\n"; got != want {
		t.Errorf("request with params is\n%s want\n%s", got, want)
	}
	p.sendf(`{"jsonrpc":"2.0","id":%s,"result":{}}`, m.ID)
	if err := waitfor.Recv(t, errc, "the call to return its error"); err != nil {
		t.Fatal(err)
	}
}

// A second answer to one request settles nothing: it is reported as a bad
// line, and the caller keeps the first.
func TestSecondAnswerIsABadLine(t *testing.T) {
	var mu sync.Mutex
	var bad []BadLine
	c, p := newPair(t, newRecorder(), &ConnOptions{OnBadLine: func(b BadLine) { mu.Lock(); bad = append(bad, b); mu.Unlock() }})
	got := make(chan map[string]string, 1)
	go func() {
		var v map[string]string
		if err := c.Call(context.Background(), "x/once", nil, &v); err != nil {
			t.Error(err)
		}
		got <- v
	}()
	m := p.recv()
	p.sendf(`{"jsonrpc":"2.0","id":%s,"result":{"n":"first"}}`, m.ID)
	p.sendf(`{"jsonrpc":"2.0","id":%s,"result":{"n":"second"}}`, m.ID)
	p.send(chunkLineJSON("s", "after"))
	c.client.(*recorder).waitUpdates(t, 1)
	if v := waitfor.Recv(t, got, "the result"); v["n"] != "first" {
		t.Errorf("call got %v, want the first answer", v)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(bad) != 1 || !strings.Contains(bad[0].Reason, "no pending request") {
		t.Errorf("bad lines %+v, want the second answer alone", bad)
	}
}

// Once the agent's output has ended, a call waiting for its answer, and
// every later call or notification, fails with ErrClosed without writing.
func TestCallsFailOnceTheOutputEnds(t *testing.T) {
	c, p := newPair(t, newRecorder(), nil)
	errc := make(chan error, 1)
	go func() { errc <- c.Call(context.Background(), "x/never", nil, nil) }()
	p.recv()
	p.conn.Close()
	if err := waitfor.Recv(t, errc, "the call to return its error"); !errors.Is(err, ErrClosed) {
		t.Fatalf("waiting call: %v, want ErrClosed", err)
	}
	waitfor.Closed(t, c.Done(), "the connection to end")
	if err := c.Call(context.Background(), "x/later", nil, nil); !errors.Is(err, ErrClosed) {
		t.Errorf("later call: %v, want ErrClosed", err)
	}
	if err := c.Notify(context.Background(), "x/note", nil); !errors.Is(err, ErrClosed) {
		t.Errorf("later notification: %v, want ErrClosed", err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.calls) != 0 {
		t.Errorf("%d calls still registered after the end", len(c.calls))
	}
}

// gate is a reader that ends (io.EOF) once open is closed: in a
// MultiReader it holds back what follows until then.
type gate struct{ open chan struct{} }

func (g gate) Read([]byte) (int, error) {
	<-g.open
	return 0, io.EOF
}

// FuzzAnswers feeds arbitrary agent output to a Conn with three calls
// waiting, then a good answer to one of them and a chunk. Whatever comes,
// the Conn must not panic, every call must end (answered or failed with
// the connection), an answered call must hold valid JSON, no call may stay
// registered, and the chunk after the junk must still be delivered.
func FuzzAnswers(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"no"}}` + "\n" + `{"jsonrpc":"2.0","id":2,"result":1}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":"3","result":{}}` + "\n" + `{"id":3,"result":null,"error":null}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"error":"junk"}` + "\n" + `{"jsonrpc":"2.0","id":18446744073709551616,"result":{}}`))
	f.Fuzz(func(t *testing.T, junk []byte) {
		const marker = "fuzz-answers-marker"
		input := append(append([]byte(nil), junk...), '\n')
		input = append(input, `{"jsonrpc":"2.0","id":2,"result":{"ok":true}}`+"\n"...)
		input = append(input, chunkLineJSON("s", marker)+"\n"...)
		open := make(chan struct{})
		rec := newRecorder()
		c := NewConn(scriptedStream{io.MultiReader(gate{open}, bytes.NewReader(input))}, rec, &ConnOptions{MaxLineBytes: 1 << 20, ExitWait: 1})
		var calls []*outCall
		for id := uint64(1); id <= 3; id++ {
			oc, err := c.register(id, nil)
			if err != nil {
				t.Fatal(err)
			}
			calls = append(calls, oc)
		}
		close(open)
		<-c.Done()
		for i, oc := range calls {
			if err := oc.wait(context.Background()); err != nil && !errors.Is(err, errCallsEnded) {
				t.Fatalf("call %d: %v", i+1, err)
			}
			if oc.answered && oc.err == nil && !json.Valid(oc.result) {
				t.Fatalf("call %d answered with invalid JSON %q", i+1, oc.result)
			}
		}
		c.mu.Lock()
		left := len(c.calls)
		c.mu.Unlock()
		if left != 0 {
			t.Fatalf("%d calls still registered after the end", left)
		}
		ups := rec.snapshot()
		if len(ups) == 0 {
			t.Fatal("the chunk after the junk was not delivered")
		}
		if last, ok := ups[len(ups)-1].Update.(*AgentMessageChunk); !ok || last.Content.Text != marker {
			t.Fatalf("last update %#v, want the marker chunk", ups[len(ups)-1].Update)
		}
	})
}
