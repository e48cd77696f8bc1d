package acpclient

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestDecodeTerminalUpdates: the draft's terminal_update and
// terminal_output_chunk decode into their variants, patch fields keep null
// apart from omitted, fields of the wrong type fall back to zero values,
// and the data decodes from base64.
func TestDecodeTerminalUpdates(t *testing.T) {
	u, ok := decodeUpdate(json.RawMessage(`{"sessionUpdate":"terminal_update","terminalId":"term-1","command":"go test ./...","cwd":null,` +
		`"output":{"data":"b2sK"},"exitStatus":{"exitCode":0,"signal":null},"_meta":{"k":1},"future":true}`)).(*TerminalUpdate)
	if !ok {
		t.Fatal("terminal_update not decoded as *TerminalUpdate")
	}
	if cmd, set := u.Command(); !set || cmd != "go test ./..." {
		t.Errorf("command %q %v", cmd, set)
	}
	if cwd, set := u.Cwd(); !set || cwd != "" {
		t.Errorf("null cwd should read as cleared: %q %v", cwd, set)
	}
	if out, err := u.Output.Bytes(); err != nil || string(out) != "ok\n" {
		t.Errorf("output %q %v", out, err)
	}
	if u.ExitStatus == nil || *u.ExitStatus.ExitCode != 0 || u.ExitStatus.Signal != nil || string(u.Meta) != `{"k":1}` {
		t.Errorf("%+v", u)
	}

	bare := decodeUpdate(json.RawMessage(`{"sessionUpdate":"terminal_update","terminalId":"term-2","command":7}`)).(*TerminalUpdate)
	if _, set := bare.Cwd(); set || bare.Output != nil || bare.ExitStatus != nil {
		t.Errorf("omitted fields read as set: %+v", bare)
	}

	c, ok := decodeUpdate(json.RawMessage(`{"sessionUpdate":"terminal_output_chunk","terminalId":"term-1","data":"4pyTIGRvbmUK"}`)).(*TerminalOutputChunk)
	if !ok {
		t.Fatal("terminal_output_chunk not decoded as *TerminalOutputChunk")
	}
	if b, err := c.Bytes(); err != nil || string(b) != "✓ done\n" || c.TerminalID != "term-1" {
		t.Errorf("chunk %q %v %+v", b, err, c)
	}
	unpadded := &TerminalOutputChunk{Data: "b2s"}
	if b, err := unpadded.Bytes(); err != nil || string(b) != "ok" {
		t.Errorf("unpadded base64: %q %v", b, err)
	}
	if _, err := (&TerminalOutputChunk{Data: "not base64!"}).Bytes(); err == nil {
		t.Error("junk data decoded without error")
	}
}

// TestTerminalUpdatesRoundTrip: what we decode re-encodes to the same value.
func TestTerminalUpdatesRoundTrip(t *testing.T) {
	for _, raw := range []string{
		`{"sessionUpdate":"terminal_update","terminalId":"t","command":"ls","cwd":null,"output":{"data":"eA=="},"exitStatus":{"exitCode":1}}`,
		`{"sessionUpdate":"terminal_output_chunk","terminalId":"t","data":"eA==","_meta":{"a":1}}`,
	} {
		out, err := json.Marshal(decodeUpdate(json.RawMessage(raw)))
		if err != nil {
			t.Fatal(err)
		}
		var a, b any
		json.Unmarshal([]byte(raw), &a)
		json.Unmarshal(out, &b)
		if !reflect.DeepEqual(a, b) {
			t.Errorf("round trip of %s gave %s", raw, out)
		}
	}
}
