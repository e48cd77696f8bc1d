package acpclient

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/acphost/acphost/internal/waitfor"
)

// limitedWriter is a TextFileWriter with a cap that records what it writes.
type limitedWriter struct {
	*recorder
	limit  int64
	writes chan *WriteTextFileRequest
	text   string // what ReadTextFile serves
}

func (w *limitedWriter) MaxTextFileWrite(string) int64 { return w.limit }

func (w *limitedWriter) WriteTextFile(_ context.Context, req *WriteTextFileRequest) error {
	w.writes <- req
	return nil
}

func (w *limitedWriter) ReadTextFile(context.Context, *ReadTextFileRequest) (*ReadTextFileResponse, error) {
	return &ReadTextFileResponse{Content: w.text}, nil
}

// TestWriteOverClientLimitIsRefusedUndecoded checks that a write whose
// decoded content is over the client's cap is answered with -32602 without
// reaching the client, that one at the cap (with escapes that make its line
// longer than the cap) is delivered decoded exactly, and that a content of
// the wrong type still counts as "".
func TestWriteOverClientLimitIsRefusedUndecoded(t *testing.T) {
	w := &limitedWriter{recorder: newRecorder(), limit: 64, writes: make(chan *WriteTextFileRequest, 4)}
	c, p := newPair(t, w, nil)
	p.handshake(c, fullCaps)
	atCap := strings.Repeat("\n\"é", 64/4) // 4 bytes each, 64 in all; the JSON is longer
	lit, _ := json.Marshal(atCap)
	p.sendf(`{"jsonrpc":"2.0","id":1,"method":"fs/write_text_file","params":{"sessionId":"s","path":"/f","content":%s,"_meta":{"k":1}}}`, lit)
	if m := p.recv(); m.Error != nil {
		t.Fatalf("write at the cap answered %s", m.line)
	}
	if got := waitfor.Recv(t, w.writes, "a file write"); got.Content != atCap || got.Path != "/f" || got.SessionID != "s" || string(got.Meta) != `{"k":1}` {
		t.Fatalf("write at the cap delivered %+v", got)
	}
	over, _ := json.Marshal(atCap + "x")
	p.sendf(`{"jsonrpc":"2.0","id":2,"method":"fs/write_text_file","params":{"content":%s,"sessionId":"s","path":"/f"}}`, over)
	m := p.recv()
	if m.Error == nil || m.Error.Code != CodeInvalidParams || !strings.Contains(m.Error.Message, "65 bytes") ||
		!strings.Contains(m.Error.Message, "/f") {
		t.Fatalf("over-cap write answered %s", m.line)
	}
	// Content that is missing or not a string is refused: read as "", it
	// would empty the file.
	for i, params := range []string{`"content":5`, `"content":null`, `"content":["x"]`, `"other":"x"`} {
		p.sendf(`{"jsonrpc":"2.0","id":%d,"method":"fs/write_text_file","params":{"sessionId":"s","path":"/g",%s}}`, 3+i, params)
		if m := p.recv(); m.Error == nil || m.Error.Code != CodeInvalidParams || !strings.Contains(m.Error.Message, "content must be a string") {
			t.Errorf("write with %s answered %s", params, m.line)
		}
	}
	select {
	case got := <-w.writes:
		t.Fatalf("a refused write reached the client: %+v", got)
	default:
	}
}

// TestReadTextFileServesTextAsIs checks that a BOM, CRLF and NUL reach
// the agent as the TextFileReader returned them. Refusing text that is not
// UTF-8 is the reader's rule (fsroot's; see bridge's
// TestFileThatIsNotUTF8IsRefusedToTheAgent).
func TestReadTextFileServesTextAsIs(t *testing.T) {
	w := &limitedWriter{recorder: newRecorder(), writes: make(chan *WriteTextFileRequest, 1)}
	c, p := newPair(t, w, nil)
	p.handshake(c, fullCaps)
	w.text = "\ufeffbom\r\ncrlf\x00"
	p.send(`{"jsonrpc":"2.0","id":2,"method":"fs/read_text_file","params":{"sessionId":"s","path":"/ok"}}`)
	var got ReadTextFileResponse
	if m := p.recv(); m.Error != nil || json.Unmarshal(m.Result, &got) != nil || got.Content != w.text {
		t.Fatalf("valid text answered %s", m.line)
	}
}

// keeper is an ExtensionHandler that keeps every notification's params.
type keeper struct {
	*recorder
	kept chan json.RawMessage
}

func (k *keeper) HandleExtension(context.Context, string, json.RawMessage) (any, error) {
	return nil, nil
}

func (k *keeper) HandleExtensionNotification(_ context.Context, _ string, params json.RawMessage) {
	k.kept <- params
}

// TestKeptParamsSurviveLaterLines checks that params handed to the client
// stay intact while later lines, short and long, are read: long lines are
// handed over without a copy, so the reader must not reuse their memory.
func TestKeptParamsSurviveLaterLines(t *testing.T) {
	k := &keeper{recorder: newRecorder(), kept: make(chan json.RawMessage, 8)}
	c, p := newPair(t, k, nil)
	p.handshake(c, fullCaps)
	var want []string
	for i, size := range []int{10, 200 << 10, 300 << 10, 20, 1 << 20} {
		params := fmt.Sprintf(`{"n":%d,"pad":"%s"}`, i, strings.Repeat(string(rune('a'+i)), size))
		want = append(want, params)
		p.sendf(`{"jsonrpc":"2.0","method":"_x","params":%s}`, params)
	}
	var got []json.RawMessage
	for range want {
		got = append(got, <-k.kept)
	}
	for i := range want {
		if string(got[i]) != want[i] {
			t.Errorf("params %d changed: %d bytes, starts %q", i, len(got[i]), got[i][:min(len(got[i]), 20)])
		}
	}
}

// TestWriteOfInvalidUnicodeIsRefused checks that content which would not
// decode to the characters sent (raw bytes that are not UTF-8, unpaired
// surrogate escapes) is refused rather than written with U+FFFD, while real
// characters, pairs and a literal U+FFFD pass.
func TestWriteOfInvalidUnicodeIsRefused(t *testing.T) {
	w := &limitedWriter{recorder: newRecorder(), writes: make(chan *WriteTextFileRequest, 8)}
	c, p := newPair(t, w, nil)
	p.handshake(c, fullCaps)
	bad := []string{"ok\xff\xfeend", `\udc80x`, `x\ud83d`, `\ud83dx\ude00`, `\ud83d\u0041`, "caf\xc3"}
	for i, content := range bad {
		p.sendf(`{"jsonrpc":"2.0","id":%d,"method":"fs/write_text_file","params":{"sessionId":"s","path":"/f","content":"%s"}}`, i+1, content)
		if m := p.recv(); m.Error == nil || m.Error.Code != CodeInvalidParams || !strings.Contains(m.Error.Message, "not valid Unicode") {
			t.Errorf("content %q answered %s", content, m.line)
		}
	}
	good := map[string]string{`\ud83d\ude00 ok`: "😀 ok", "\xef\xbf\xbd": "\uFFFD", `\ufffd`: "\uFFFD", "é\\n\\\\u": "é\n\\u"}
	id := 100
	for lit, want := range good {
		id++
		p.sendf(`{"jsonrpc":"2.0","id":%d,"method":"fs/write_text_file","params":{"sessionId":"s","path":"/f","content":"%s"}}`, id, lit)
		if m := p.recv(); m.Error != nil {
			t.Errorf("content %q answered %s", lit, m.line)
			continue
		}
		if got := waitfor.Recv(t, w.writes, "a file write"); got.Content != want {
			t.Errorf("content %q written as %q, want %q", lit, got.Content, want)
		}
	}
	select {
	case got := <-w.writes:
		t.Errorf("a refused write reached the client: %q", got.Content)
	default:
	}
}
