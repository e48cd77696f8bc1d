package acpclient

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestMCPCapabilitiesTakes: stdio servers are always taken, the others
// only when the agent advertises their transport; Required never goes on
// the wire.
func TestMCPCapabilitiesTakes(t *testing.T) {
	for _, tt := range []struct {
		caps MCPCapabilities
		typ  string
		want bool
	}{
		{MCPCapabilities{}, "", true},
		{MCPCapabilities{}, "stdio", true},
		{MCPCapabilities{}, "http", false},
		{MCPCapabilities{HTTP: true}, "http", true},
		{MCPCapabilities{HTTP: true}, "sse", false},
		{MCPCapabilities{SSE: true}, "sse", true},
		{MCPCapabilities{}, "acp", false},
		{MCPCapabilities{ACP: true}, "acp", true},
	} {
		if got := tt.caps.Takes(MCPServer{Type: tt.typ, Name: "m"}); got != tt.want {
			t.Errorf("%+v takes %q: %v, want %v", tt.caps, tt.typ, got, tt.want)
		}
	}
	for _, typ := range []string{"", "http", "acp"} {
		b, err := json.Marshal(MCPServer{Type: typ, Name: "m", Required: true})
		if err != nil || strings.Contains(strings.ToLower(string(b)), "required") {
			t.Errorf("%q server marshals as %s (%v): Required must stay the host's", typ, b, err)
		}
	}
}
