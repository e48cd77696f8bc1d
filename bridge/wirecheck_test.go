package bridge

import (
	"encoding/json"
	"testing"

	"github.com/acphost/acphost/acptest"
	"github.com/acphost/acphost/internal/schematest"
)

// sentChecked returns the requests of one method the transport's agents
// received, oldest first, each checked against the pinned stable schema.
func sentChecked(t *testing.T, tr *acptest.Transport, method string) []acptest.Message {
	t.Helper()
	v := schematest.Load(t)
	var out []acptest.Message
	for _, a := range tr.Agents() {
		for _, m := range a.Received() {
			if m.Method != method {
				continue
			}
			line, err := json.Marshal(struct {
				JSONRPC string          `json:"jsonrpc"`
				ID      json.RawMessage `json:"id,omitempty"`
				Method  string          `json:"method"`
				Params  json.RawMessage `json:"params,omitempty"`
			}{"2.0", m.ID, m.Method, m.Params})
			if err != nil {
				t.Fatal(err)
			}
			if err := v.ValidateClientMessage(line); err != nil {
				t.Errorf("%s against the schema: %v\n%s", method, err, line)
			}
			out = append(out, m)
		}
	}
	return out
}
