package acpclient

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// generalDecode decodes line the way Conn.handleLine does when the fast path
// declines: the envelope, then the params of a session/update notification.
// It returns nil when the general path would not deliver a notification.
func generalDecode(line []byte) *SessionNotification {
	var env envelope
	if json.Unmarshal(line, &env) != nil {
		return nil
	}
	if env.JSONRPC != nil && *env.JSONRPC != "2.0" {
		return nil
	}
	if env.Method == nil || env.Result != nil || env.Error != nil || env.ID != nil || *env.Method != methodSessionUpdate {
		return nil
	}
	var n SessionNotification
	if n.UnmarshalJSON(env.Params) != nil {
		return nil
	}
	testRaw.Store(&n, &rawSource{raw: env.Params})
	return &n
}

// sameNotification fails t unless fast (from the fast path) and slow (from
// the general path) are indistinguishable.
func sameNotification(t *testing.T, line []byte, fast, slow *SessionNotification) {
	t.Helper()
	if slow == nil {
		t.Fatalf("fast path accepted a line the general path does not deliver: %q", line)
	}
	if fast.SessionID != slow.SessionID || !bytes.Equal(fast.Meta, slow.Meta) || (fast.Meta == nil) != (slow.Meta == nil) {
		t.Fatalf("line %q:\nfast session %q meta %q\ngeneral session %q meta %q", line, fast.SessionID, fast.Meta, slow.SessionID, slow.Meta)
	}
	if !reflect.DeepEqual(fast.Update, slow.Update) {
		t.Fatalf("line %q:\nfast update    %#v\ngeneral update %#v", line, fast.Update, slow.Update)
	}
	fj, err1 := json.Marshal(fast)
	sj, err2 := json.Marshal(slow)
	if err1 != nil || err2 != nil || !bytes.Equal(fj, sj) {
		t.Fatalf("line %q:\nfast    %s (%v)\ngeneral %s (%v)", line, fj, err1, sj, err2)
	}
}

// checkFast decodes line on the chunk fast path, as notifications and as
// text deltas, owned or not, and checks whatever it takes against the
// general path. It reports whether the fast path took the line.
func checkFast(t *testing.T, line []byte) bool {
	t.Helper()
	slow := generalDecode(line)
	took := false
	for _, lean := range []bool{false, true} {
		for _, owned := range []bool{false, true} {
			var d chunkDecoder
			d.scan.Lean = lean
			in := d.decode(bytes.Clone(line), owned)
			switch {
			case in == nil:
				continue
			case in.delta != nil:
				if !lean {
					t.Fatalf("line %q: a text delta for a Client that takes none", line)
				}
				sameNotification(t, line, deltaNote(in.delta), slow)
				if slow.Meta != nil {
					t.Fatalf("line %q: a text delta lost the notification's _meta", line)
				}
			default:
				sameNotification(t, line, in.update, slow)
			}
			took = true
		}
	}
	return took
}

const chunkPrefix = `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":`

// The chunk fast path turns what internal/wire/scan decodes (its tests
// hold the scanner to encoding/json) into the notifications and text
// deltas the general path gives: plain chunks, escapes, _meta at every
// level, rich blocks handed back to encoding/json, and lines it declines.
func TestFastPathMatchesGeneralPath(t *testing.T) {
	taken := []string{
		chunkLineJSON("s", "plain"),
		string(benchLines(1)[0]),
		`{"params":{"update":{"messageId":"m","content":{"text":"reordered keys","type":"text"},"sessionUpdate":"user_message_chunk"},"sessionId":"s"},"method":"session/update","jsonrpc":"2.0"}`,
		"  \t{ \"jsonrpc\" : \"2.0\" ,\n \"method\":\"session/update\",\"params\":{ \"sessionId\" : \"s\" , \"update\" : { \"sessionUpdate\" : \"agent_thought_chunk\" , \"content\" : { \"type\" : \"text\" , \"text\" : \"spaced\" } } } }\r\n",
		chunkPrefix + `{"type":"text","text":"esc \" \\ \/ \b \f \n \r \t \u0041 \u00e9 \ud83d\ude00 \ud83d end"}}}}`,
		chunkPrefix + "{\"type\":\"text\",\"text\":\"bad utf8 \xff \xc3 end\"}}}}",
		chunkPrefix + `{"type":"text","text":"x"},"messageId":null}}}`,
		chunkPrefix + `{"type":"text","text":"x","_meta":{"a":[1,true,null]}},"_meta":[{"x":0.0}]},"_meta":{"y":-0}}}`,
		chunkPrefix + `{"type":"text","text":"x"},"_meta":{"seq":1}}}}`,
		chunkPrefix + `{"type":"image","text":"type image, text only"}}}}`,
		chunkPrefix + `{"type":"resource_link"}}}}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{"update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"no session"}}}}`,
		// Handed back by the scanner, decoded by encoding/json.
		chunkPrefix + `{"type":"text","text":"t","annotations":{"priority":1}}}}}`,
		chunkPrefix + `{"type":"image","data":"AAAA","mimeType":"image/png"}}}}`,
		chunkPrefix + `{"type":"resource","resource":{"uri":"file:///a","text":"x"}}}}}`,
	}
	for _, l := range taken {
		if !checkFast(t, []byte(l)) {
			t.Errorf("the fast path declined %q", l)
		}
	}
	declined := []string{
		chunkPrefix + `{"type":"blob","text":"unknown type"}}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x"}}}}`,
		strings.Replace(chunkLineJSON("s", "x"), `"sessionId"`, `"SessionId"`, 1),
		strings.Replace(chunkLineJSON("s", "x"), `agent_message_chunk`, `plan`, 1),
		chunkLineJSON("s", "x") + " x",
	}
	for _, l := range declined {
		if checkFast(t, []byte(l)) {
			t.Errorf("the fast path took %q", l)
		}
	}
}
