package httpstream

import (
	"strings"
	"testing"
)

func TestPeek(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want message
	}{
		{`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"text","text":"a \"sessionId\":\"no\""}]}}`,
			message{id: "n:3", method: "session/prompt", session: "s1"}},
		{`{"jsonrpc":"2.0","id":"a\"b","result":{"modes":{"sessionId":"deep"},"sessionId":"s\u0032"}}`,
			message{id: `s:a"b`, session: "s2"}},
		{`{"jsonrpc":"2.0","method":"session/update","params":{"update":{"sessionId":"x"},"sessionId":"s3"}}`,
			message{method: "session/update", session: "s3"}},
		{`{ "id" : 12 , "result" : { } }`, message{id: "n:12"}},
		{`{"id":null,"error":{"code":1}}`, message{id: "n:null"}},
		{`{"params":["sessionId","x"],"method":"m"}`, message{method: "m"}},
		{`not json at all`, message{}},
		{`{"id":"` + strings.Repeat("x", 2000) + `","result":{}}`, message{}},
	} {
		var p peek
		p.Write([]byte(tc.in))
		got := p.result()
		if got.id != tc.want.id || got.method != tc.want.method || got.session != tc.want.session {
			t.Errorf("%.80s: %+v, want %+v", tc.in, got, tc.want)
		}
	}
	// Bytes in pieces give the same.
	var p peek
	for _, c := range []byte(`{"id":7,"method":"x","params":{"sessionId":"q"}}`) {
		p.Write([]byte{c})
	}
	if got := p.result(); got.id != "n:7" || got.session != "q" || string(got.rawID) != "7" {
		t.Errorf("byte by byte: %+v", got)
	}
}
