package bridge

import (
	"encoding/json"
	"fmt"

	"github.com/acphost/acphost/acpclient"
)

// clientCapabilities fills in what the bridge declares beyond what the
// connection derives from the client: the session updates it types (boolean
// config options, compaction, plan operations), terminal sign-in, the agents' terminal output extension
// (Config.AgentTerminalOutput) and the app's _meta keys
// (Config.ClientCapabilitiesMeta, AuthCapabilitiesMeta).
func (b *Bridge) clientCapabilities(caps *acpclient.ClientCapabilities) error {
	caps.Session = &acpclient.ClientSessionCapabilities{
		ConfigOptions: &acpclient.ConfigOptionsCapabilities{Boolean: &acpclient.Marker{}},
		Compaction:    &acpclient.Marker{},
	}
	caps.Plan = &acpclient.Marker{}
	own := map[string]any{}
	var auth *acpclient.AuthCapabilities
	if b.cfg.TerminalLogin != nil {
		// The standard capability, and the _meta flag agents that predate
		// it check before they list their terminal login.
		auth = &acpclient.AuthCapabilities{Terminal: true}
		own["terminal-auth"] = true
	}
	if b.cfg.AgentTerminalOutput {
		own["terminal_output"] = true
	}
	meta, err := mergeMeta(b.cfg.ClientCapabilitiesMeta, own)
	if err != nil {
		return fmt.Errorf("bridge %s: Config.ClientCapabilitiesMeta: %w", b.cfg.ID, err)
	}
	caps.Meta = meta
	if len(b.cfg.AuthCapabilitiesMeta) > 0 {
		authMeta, err := mergeMeta(b.cfg.AuthCapabilitiesMeta, nil)
		if err != nil {
			return fmt.Errorf("bridge %s: Config.AuthCapabilitiesMeta: %w", b.cfg.ID, err)
		}
		if auth == nil {
			auth = &acpclient.AuthCapabilities{}
		}
		auth.Meta = authMeta
	}
	caps.Auth = auth
	return nil
}

// mergeMeta merges the app's JSON object with the bridge's keys, which
// win; nil when both are empty.
func mergeMeta(app json.RawMessage, own map[string]any) (json.RawMessage, error) {
	merged := map[string]any{}
	if len(app) > 0 {
		if err := json.Unmarshal(app, &merged); err != nil {
			return nil, fmt.Errorf("not a JSON object: %w", err)
		}
	}
	for k, v := range own {
		merged[k] = v
	}
	if len(merged) == 0 {
		return nil, nil
	}
	return json.Marshal(merged)
}
