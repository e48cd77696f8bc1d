package scan

import (
	"encoding/json"
	"testing"
)

// LocateUpdate finds the update object encoding/json finds, in a whole
// line or in its params, and gives up on keys encoding/json could match by
// folding case or through escapes.
func TestLocateUpdate(t *testing.T) {
	for _, params := range []string{
		`{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"t"}}`,
		` { "update" : [1, {"a":"}"}] , "x":{"update":1}} `,
		`{"_meta":{"update":{}},"update":"str\"ing"}`,
		`{"update":null}`,
	} {
		line := `{"jsonrpc":"2.0","method":"session/update","params":` + params + `}`
		var want struct {
			Update json.RawMessage `json:"update"`
		}
		if err := json.Unmarshal([]byte(params), &want); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			b      string
			inLine bool
		}{{params, false}, {line, true}} {
			got, ok := LocateUpdate([]byte(c.b), c.inLine)
			if !ok || string(got) != string(want.Update) {
				t.Errorf("LocateUpdate(%s, %v) = %s, %v; want %s", c.b, c.inLine, got, ok, want.Update)
			}
		}
	}
	for _, b := range []string{
		`{"Update":{}}`, `{"upd\u0061te":{}}`, `{"sessionId":"s"}`, `[]`,
	} {
		if got, ok := LocateUpdate([]byte(b), false); ok {
			t.Errorf("LocateUpdate(%s) = %s, want it to give up", b, got)
		}
	}
	if got, ok := LocateUpdate([]byte(`{"PARAMS":{"update":{}}}`), true); ok {
		t.Errorf("LocateUpdate found %s under a folded params key", got)
	}
}
