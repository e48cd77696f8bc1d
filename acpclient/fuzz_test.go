package acpclient

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"testing"
)

// nopWriteCloser is an agent stream whose input is fixed bytes.
type scriptedStream struct {
	io.Reader
}

func (scriptedStream) Write(p []byte) (int, error) { return len(p), nil }
func (scriptedStream) Close() error                { return nil }

// FuzzFraming feeds arbitrary agent output to a Conn. Whatever comes, the
// Conn must not panic, must end only because the input ended (or a line was
// over the cap), and must still deliver a good line that follows the junk.
func FuzzFraming(f *testing.F) {
	f.Add([]byte("not json\n"))
	f.Add([]byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x"}}}}` + "\n"))
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}` + "\n" + `{"jsonrpc":"2.0","id":"a","method":"session/request_permission","params":{}}`))
	f.Add([]byte("{\"jsonrpc\":\"2.0\",\"method\":\"session/update\",\"params\":{\"sessionId\":\"s\",\"update\":{\"sessionUpdate\":\"agent_message_chunk\",\"content\":{\"type\":\"text\",\"text\":\"\\u00\"}}}}\n"))
	f.Add([]byte("\r\n\r\n{}\n[]\nnull\n"))
	f.Fuzz(func(t *testing.T, junk []byte) {
		const marker = "fuzz-marker-line"
		input := append(append([]byte(nil), junk...), '\n')
		input = append(input, chunkLineJSON("s", marker)+"\n"...)
		rec := newRecorder()
		c := NewConn(scriptedStream{bytes.NewReader(input)}, rec, &ConnOptions{MaxLineBytes: 1 << 20, ExitWait: 1})
		<-c.Done()
		if err := c.Err(); !errors.Is(err, ErrClosed) || (errors.Unwrap(err) != nil && !errors.Is(err, ErrLineTooLong)) {
			t.Fatalf("connection ended with %v", err)
		}
		ups := rec.snapshot()
		if len(ups) == 0 {
			t.Fatal("the good line after the junk was not delivered")
		}
		last, ok := ups[len(ups)-1].Update.(*AgentMessageChunk)
		if !ok || last.Content.Text != marker {
			t.Fatalf("last update %#v, want the marker chunk", ups[len(ups)-1].Update)
		}
	})
}

// FuzzDecodeUpdate checks the update decoder never fails or panics, always
// produces something that encodes, and that the single-pass chunk decoder
// agrees with the general one whenever it accepts a line.
func FuzzDecodeUpdate(f *testing.F) {
	f.Add([]byte(`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}`))
	f.Add([]byte(`{"sessionUpdate":"tool_call","toolCallId":"t","title":"x","content":[{"type":"diff","path":"/a","newText":"b"}]}`))
	f.Add([]byte(`{"sessionUpdate":"session_info_update","title":null}`))
	f.Add([]byte(`{"sessionUpdate":"config_option_update","configOptions":[{"id":"a","type":"select","currentValue":"x","options":[]}]}`))
	f.Add([]byte(`{"sessionUpdate":42}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		u := decodeUpdate(raw)
		if u == nil {
			t.Fatal("nil update")
		}
		if _, err := json.Marshal(u); err != nil && json.Valid(raw) {
			t.Fatalf("decoded update does not encode: %v", err)
		}
		line := []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":` + string(raw) + `}}`)
		fast := decodeChunkLine(line)
		if fast == nil {
			return
		}
		var slow SessionNotification
		if err := slow.UnmarshalJSON(line[len(`{"jsonrpc":"2.0","method":"session/update","params":`) : len(line)-1]); err != nil {
			t.Fatalf("fast path accepted a line the general path rejects: %v", err)
		}
		fj, err1 := json.Marshal(fast)
		sj, err2 := json.Marshal(&slow)
		if err1 != nil || err2 != nil || !bytes.Equal(fj, sj) {
			t.Fatalf("fast %s (%v) != general %s (%v)", fj, err1, sj, err2)
		}
	})
}
