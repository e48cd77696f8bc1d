package acpclient

import (
	"bytes"
	"encoding/json"
	"testing"
)

// generalNotification decodes a line as the general path does: the
// envelope, then the params.
func generalNotification(t *testing.T, line []byte) *SessionNotification {
	t.Helper()
	var env envelope
	if err := json.Unmarshal(line, &env); err != nil {
		t.Fatalf("tool path accepted a line the general path rejects: %v", err)
	}
	var n SessionNotification
	if err := n.UnmarshalJSON(env.Params); err != nil {
		t.Fatalf("general path: %v", err)
	}
	testRaw.Store(&n, &rawSource{raw: env.Params})
	return &n
}

// checkToolLine checks that whenever the single-pass tool decoder accepts a
// line, the notification equals the general path's, and so does its raw
// update.
func checkToolLine(t *testing.T, line []byte) bool {
	t.Helper()
	n := noteOf(decodeToolLine(line, false))
	if n == nil {
		return false
	}
	g := generalNotification(t, line)
	fj, err1 := json.Marshal(n)
	gj, err2 := json.Marshal(g)
	if err1 != nil || err2 != nil || !bytes.Equal(fj, gj) {
		t.Fatalf("line %s:\ntool path %s (%v)\ngeneral   %s (%v)", line, fj, err1, gj, err2)
	}
	if a, b := rawUpdate(n), rawUpdate(g); !bytes.Equal(a, b) {
		t.Fatalf("line %s: raw update %s, general %s", line, a, b)
	}
	return true
}

const toolPrefix = `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":`

func TestToolLineMatchesGeneral(t *testing.T) {
	accept := []string{
		`{"sessionUpdate":"tool_call","toolCallId":"t","title":"Edit","kind":"edit","status":"pending","locations":[{"path":"/a","line":3}],"rawInput":{"x":[1,2]}}`,
		`{"sessionUpdate":"tool_call_update","toolCallId":"t","status":"completed","content":[{"type":"diff","path":"/a","oldText":"x","newText":"y"},{"type":"content","content":{"type":"text","text":"ok"}},{"type":"terminal","terminalId":"term"}]}`,
		`{"sessionUpdate":"tool_call_update","toolCallId":"t","content":[],"title":null}`,
		`{"sessionUpdate":"tool_call","toolCallId":"t","title":"\u00e9\n","name":"Read","_meta":{"a":1},"rawOutput":"out"}`,
	}
	for _, u := range accept {
		if !checkToolLine(t, []byte(toolPrefix+u+`}}`)) {
			t.Errorf("declined %s", u)
		}
	}
	decline := []string{
		`{"sessionUpdate":"tool_call","toolCallId":"t","content":[{"type":"future","x":1}]}`,
		`{"sessionUpdate":"tool_call","toolCallId":"t","content":[null]}`,
		`{"sessionUpdate":"tool_call","toolCallId":"t","content":[{"type":"content","content":{"type":"video"}}]}`,
		`{"sessionUpdate":"tool_call","toolCallId":5}`,
		`{"sessionUpdate":"tool_call_update","toolCallId":"t","content":{"type":"text","text":"x"}}`,
		`{"sessionUpdate":"plan","entries":[],"_meta":"tool_call"}`,
		`{"SessionUpdate":"tool_call","ToolCallID":"t","Title":"case-folded keys"}`,
		`{"sessionUpdate":"tool_call","toolCallId":"t","vendorField":1}`,
		`{"sessionUpdate":"tool_call","toolCallId":"t","title":"\ud800"}`,
		"{\"sessionUpdate\":\"tool_call\",\"toolCallId\":\"t\",\"title\":\"\xff\"}",
		`{"sessionUpdate":"tool_call","toolCallId":"t","locations":[{"path":"/a","line":1e1}]}`,
	}
	for _, u := range decline {
		if checkToolLine(t, []byte(toolPrefix+u+`}}`)) {
			t.Errorf("accepted %s", u)
		}
	}
	for _, line := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call"}}}`,
		`{"jsonrpc":"2.0","id":null,"method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call"}}}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call"}},"error":null}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call","title":"a","title":"b"}}}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call"}},"result":{}}`,
		`{"jsonrpc":"1.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call"}}}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call"}}`,
	} {
		if checkToolLine(t, []byte(line)) {
			t.Errorf("accepted %s", line)
		}
	}
}

// FuzzToolLine checks the single-pass tool decoder against the general path.
func FuzzToolLine(f *testing.F) {
	f.Add([]byte(`{"sessionUpdate":"tool_call","toolCallId":"t","title":"x","content":[{"type":"diff","path":"/a","newText":"b"}]}`))
	f.Add([]byte(`{"sessionUpdate":"tool_call_update","toolCallId":"t","content":[{"type":"content","content":{"type":"text","text":"x","annotations":{"priority":1}}}],"locations":[{"path":"/a"}]}`))
	f.Add([]byte(`{"sessionUpdate":"tool_call","toolCallId":"t","rawInput":{"a":"\ud800"},"kind":null}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		checkToolLine(t, raw)
		checkToolLine(t, []byte(toolPrefix+string(raw)+`}}`))
	})
}
