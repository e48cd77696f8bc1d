package wsstream

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// pair returns a client Stream and the server's WebSocket, for a test to
// drive message by message.
func pair(t *testing.T) (*Stream, *websocket.Conn) {
	t.Helper()
	server := make(chan *websocket.Conn, 1)
	done := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := websocket.Accept(w, r, nil)
		if err != nil {
			t.Error(err)
			return
		}
		server <- ws
		<-done
	}))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	s := New(ws, "test")
	var peer *websocket.Conn
	select {
	case peer = <-server:
	case <-ctx.Done():
		t.Fatal("the server did not accept the WebSocket")
	}
	t.Cleanup(func() {
		peer.CloseNow() // not reading: it would not answer a close message
		s.Close()
		close(done)
		srv.Close()
	})
	return s, peer
}

// Lines written in pieces, several at once, or with blank lines between
// go out as one message each.
func TestWriteSendsOneMessagePerLine(t *testing.T) {
	s, peer := pair(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, w := range []string{`{"a":`, "1}\n{\"b\":2}\n\n{\"c\"", ":3}\n"} {
		if n, err := io.WriteString(s, w); err != nil || n != len(w) {
			t.Fatalf("Write(%q) = %d, %v", w, n, err)
		}
	}
	for _, want := range []string{`{"a":1}`, `{"b":2}`, `{"c":3}`} {
		typ, got, err := peer.Read(ctx)
		if err != nil {
			t.Fatalf("reading %s: %v", want, err)
		}
		if typ != websocket.MessageText || string(got) != want {
			t.Fatalf("message %v %q, want text %q", typ, got, want)
		}
	}
}

// Messages read as lines: binary ones skipped, line breaks inside one
// read as spaces, a normal close read as the end of file.
func TestReadYieldsOneLinePerTextMessage(t *testing.T) {
	s, peer := pair(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	go func() {
		peer.Write(ctx, websocket.MessageText, []byte(`{"a":1}`))
		peer.Write(ctx, websocket.MessageBinary, []byte("skip me\n"))
		peer.Write(ctx, websocket.MessageText, []byte("{\n\"b\":\r\n2}"))
		peer.Close(websocket.StatusNormalClosure, "")
	}()
	r := bufio.NewReader(s)
	for _, want := range []string{`{"a":1}`, `{ "b":  2}`} {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("reading %s: %v", want, err)
		}
		if line != want+"\n" {
			t.Fatalf("line %q, want %q", line, want+"\n")
		}
	}
	if _, err := r.ReadString('\n'); err != io.EOF {
		t.Fatalf("after a normal close: %v, want io.EOF", err)
	}
}
