package httpstream

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzSSEPeek checks what peek learns of a message, fed in two pieces,
// against encoding/json reading it whole, for every valid JSON object
// without escapes (peek ignores escaped keys, which ACP never sends).
func FuzzSSEPeek(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s1"}}`,
		`{"id":"x","result":{"sessionId":"s2","modes":{"sessionId":"no"}}}`,
		`{"method":"session/update","params":{"update":{"sessionId":"no"},"sessionId":"s3"}}`,
		`{"id":[1],"method":{"a":"b"},"params":["sessionId"]}`,
	} {
		f.Add([]byte(s), 5)
	}
	f.Fuzz(func(t *testing.T, in []byte, cut int) {
		var p peek
		cut = min(max(cut, 0), len(in))
		p.Write(in[:cut])
		p.Write(in[cut:])
		got := p.result()
		if bytes.IndexByte(in, '\\') >= 0 || !json.Valid(in) {
			return
		}
		var top map[string]json.RawMessage
		if json.Unmarshal(in, &top) != nil {
			return
		}
		var want message
		json.Unmarshal(top["method"], &want.method)
		if id := bytes.TrimSpace(top["id"]); len(id) > 0 && len(id) <= maxID && id[0] != '{' && id[0] != '[' {
			if id[0] == '"' {
				var s string
				json.Unmarshal(id, &s)
				want.id = "s:" + s
			} else {
				want.id = "n:" + string(id)
			}
		}
		for _, k := range []string{"params", "result"} {
			var inner map[string]json.RawMessage
			if json.Unmarshal(top[k], &inner) == nil {
				var s string
				if sid := inner["sessionId"]; len(sid) <= maxID && json.Unmarshal(sid, &s) == nil {
					want.session = s
				}
			}
		}
		if got.id != want.id || got.method != want.method || got.session != want.session {
			t.Fatalf("%s: peek %+v, want %+v", in, got, want)
		}
	})
}
