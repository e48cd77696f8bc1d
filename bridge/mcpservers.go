package bridge

import (
	"fmt"

	"github.com/acphost/acphost/acpclient"
)

// usableMCPServers returns the session's MCP servers the agent on conn
// can take. One it cannot (an http or sse server for an agent that does
// not advertise that transport) is left out with a notice naming it, so
// the session still opens; one marked Required fails the attach with an
// error naming it instead.
func (sn *sessionNative) usableMCPServers(conn *acpclient.Conn) ([]acpclient.MCPServer, error) {
	s := sn.s
	servers := s.cfg.MCPServers
	agent := conn.Agent()
	if agent == nil {
		return servers, nil // not initialized: acpclient reports that
	}
	caps := agent.AgentCapabilities.MCPCapabilities
	var usable []acpclient.MCPServer
	for i, m := range servers {
		if caps.Takes(m) {
			if usable != nil {
				usable = append(usable, m)
			}
			continue
		}
		if m.Required {
			return nil, fmt.Errorf("bridge %s: MCP server %q over %s is required, and the agent does not take %s servers: %w",
				s.b.cfg.ID, m.Name, m.Type, m.Type, acpclient.ErrUnsupported)
		}
		if usable == nil {
			usable = append(make([]acpclient.MCPServer, 0, len(servers)), servers[:i]...)
		}
		s.emit(Event{Kind: KindNotice, Text: fmt.Sprintf("MCP server %q left out: the agent does not take %s MCP servers.", m.Name, m.Type)})
	}
	if usable == nil {
		return servers, nil
	}
	return usable, nil
}
