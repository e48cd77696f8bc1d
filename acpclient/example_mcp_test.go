package acpclient_test

import (
	"fmt"

	"github.com/acphost/acphost/acpclient"
)

// A host that may leave out the MCP servers an agent cannot take checks
// each against the agent's MCP capabilities from initialize.
func ExampleMCPCapabilities_Takes() {
	caps := acpclient.MCPCapabilities{SSE: true} // as the agent advertised
	for _, s := range []acpclient.MCPServer{
		{Name: "files", Command: "/usr/local/bin/files-mcp"},
		{Type: "http", Name: "tracker", URL: "https://mcp.example/tracker"},
		{Type: "sse", Name: "events", URL: "https://mcp.example/events"},
	} {
		fmt.Println(s.Name, caps.Takes(s))
	}
	// Output:
	// files true
	// tracker false
	// events true
}
