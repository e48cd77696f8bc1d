package acpclient

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/acphost/acphost/internal/wire"
)

// Initialize performs the handshake. It sends ProtocolVersion and the
// capabilities the Client implements (file system, terminals, elicitation),
// on top of whatever req sets (client info, auth and session capabilities,
// _meta); req may be nil. An agent answering a version this package does not
// speak is an error wrapping ErrProtocolVersion, and the Conn is closed.
func (c *Conn) Initialize(ctx context.Context, req *InitializeRequest) (*InitializeResponse, error) {
	params := InitializeRequest{}
	if req != nil {
		params = *req
	}
	params.ProtocolVersion = ProtocolVersion
	implemented := capabilitiesOf(c.client)
	params.ClientCapabilities.FS.ReadTextFile = implemented.FS.ReadTextFile
	params.ClientCapabilities.FS.WriteTextFile = implemented.FS.WriteTextFile
	params.ClientCapabilities.Terminal = implemented.Terminal
	params.ClientCapabilities.Elicitation = implemented.Elicitation

	var resp InitializeResponse
	if err := c.call(ctx, "initialize", &params, &resp); err != nil {
		return nil, err
	}
	if resp.ProtocolVersion != ProtocolVersion {
		err := fmt.Errorf("%w: agent speaks version %d, this client speaks %d", ErrProtocolVersion, resp.ProtocolVersion, ProtocolVersion)
		c.setErr(err)
		c.Close()
		return &resp, fmt.Errorf("acpclient: initialize: %w", err)
	}
	if resp.AuthMethods == nil {
		resp.AuthMethods = []AuthMethod{}
	}
	c.mu.Lock()
	c.initResp = &resp
	c.mu.Unlock()
	return &resp, nil
}

// Agent returns the agent's answer to initialize, or nil before it.
func (c *Conn) Agent() *InitializeResponse {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.initResp
}

// require checks that Initialize succeeded and the agent advertised what a
// call needs; nothing is sent otherwise.
func (c *Conn) require(method string, supported func(*AgentCapabilities) bool) error {
	a := c.Agent()
	if a == nil {
		return fmt.Errorf("acpclient: %s: %w", method, ErrNotInitialized)
	}
	if supported != nil && !supported(&a.AgentCapabilities) {
		return fmt.Errorf("acpclient: %s: %w (capability not advertised)", method, ErrUnsupported)
	}
	return nil
}

// Authenticate signs in with one of the agent's auth methods.
func (c *Conn) Authenticate(ctx context.Context, req *AuthenticateRequest) error {
	if err := c.require("authenticate", nil); err != nil {
		return err
	}
	return c.call(ctx, "authenticate", req, nil)
}

// Logout signs out; the agent must advertise auth.logout.
func (c *Conn) Logout(ctx context.Context) error {
	if err := c.require("logout", func(a *AgentCapabilities) bool { return a.Auth.Logout != nil }); err != nil {
		return err
	}
	return c.call(ctx, "logout", struct{}{}, nil)
}

// checkSessionParams enforces the capability rules of new/load/resume.
func (c *Conn) checkSessionParams(method string, dirs []string, servers []MCPServer) error {
	a := c.Agent()
	if len(dirs) > 0 && a.AgentCapabilities.SessionCapabilities.AdditionalDirectories == nil {
		return fmt.Errorf("acpclient: %s: additional directories: %w", method, ErrUnsupported)
	}
	for _, s := range servers {
		if !a.AgentCapabilities.MCPCapabilities.Takes(s) {
			return fmt.Errorf("acpclient: %s: MCP server %q over %s: %w", method, s.Name, s.Type, ErrUnsupported)
		}
	}
	return nil
}

func nonNilServers(s []MCPServer) []MCPServer {
	if s == nil {
		return []MCPServer{}
	}
	return s
}

// NewSession creates a session rooted at req.Cwd.
func (c *Conn) NewSession(ctx context.Context, req *NewSessionRequest) (*NewSessionResponse, error) {
	if err := c.require("session/new", nil); err != nil {
		return nil, err
	}
	if err := c.checkSessionParams("session/new", req.AdditionalDirectories, req.MCPServers); err != nil {
		return nil, err
	}
	params := *req
	params.MCPServers = nonNilServers(req.MCPServers)
	var resp NewSessionResponse
	if err := c.call(ctx, "session/new", &params, &resp); err != nil {
		return nil, err
	}
	return &resp, nil
}

// LoadSession reopens a stored session. The agent replays the conversation
// as session updates first; they have all reached the Client when LoadSession
// returns. Requires loadSession.
func (c *Conn) LoadSession(ctx context.Context, req *LoadSessionRequest) (*SessionSetup, error) {
	if err := c.require("session/load", func(a *AgentCapabilities) bool { return a.LoadSession }); err != nil {
		return nil, err
	}
	if err := c.checkSessionParams("session/load", req.AdditionalDirectories, req.MCPServers); err != nil {
		return nil, err
	}
	params := *req
	params.MCPServers = nonNilServers(req.MCPServers)
	var resp SessionSetup
	if err := c.call(ctx, "session/load", &params, &resp); err != nil {
		return nil, err
	}
	return &resp, nil
}

// ResumeSession reattaches to a session without replay. Requires
// sessionCapabilities.resume.
func (c *Conn) ResumeSession(ctx context.Context, req *ResumeSessionRequest) (*SessionSetup, error) {
	if err := c.require("session/resume", func(a *AgentCapabilities) bool { return a.SessionCapabilities.Resume != nil }); err != nil {
		return nil, err
	}
	if err := c.checkSessionParams("session/resume", req.AdditionalDirectories, req.MCPServers); err != nil {
		return nil, err
	}
	var resp SessionSetup
	if err := c.call(ctx, "session/resume", req, &resp); err != nil {
		return nil, err
	}
	return &resp, nil
}

// ForkSession (unstable) starts a new session from another's context.
// Requires sessionCapabilities.fork.
func (c *Conn) ForkSession(ctx context.Context, req *ForkSessionRequest) (*NewSessionResponse, error) {
	if err := c.require("session/fork", func(a *AgentCapabilities) bool { return a.SessionCapabilities.Fork != nil }); err != nil {
		return nil, err
	}
	var resp NewSessionResponse
	if err := c.call(ctx, "session/fork", req, &resp); err != nil {
		return nil, err
	}
	return &resp, nil
}

// ListSessions returns one page of stored sessions. Requires
// sessionCapabilities.list.
func (c *Conn) ListSessions(ctx context.Context, req *ListSessionsRequest) (*ListSessionsResponse, error) {
	if err := c.require("session/list", func(a *AgentCapabilities) bool { return a.SessionCapabilities.List != nil }); err != nil {
		return nil, err
	}
	if req == nil {
		req = &ListSessionsRequest{}
	}
	var resp ListSessionsResponse
	if err := c.call(ctx, "session/list", req, &resp); err != nil {
		return nil, err
	}
	return &resp, nil
}

// DeleteSession removes a stored session. Requires sessionCapabilities.delete.
func (c *Conn) DeleteSession(ctx context.Context, sessionID string) error {
	if err := c.require("session/delete", func(a *AgentCapabilities) bool { return a.SessionCapabilities.Delete != nil }); err != nil {
		return err
	}
	return c.call(ctx, "session/delete", &SessionRef{SessionID: sessionID}, nil)
}

// CloseSession stops a session's work and frees it. Requires
// sessionCapabilities.close.
func (c *Conn) CloseSession(ctx context.Context, sessionID string) error {
	if err := c.require("session/close", func(a *AgentCapabilities) bool { return a.SessionCapabilities.Close != nil }); err != nil {
		return err
	}
	return c.call(ctx, "session/close", &SessionRef{SessionID: sessionID}, nil)
}

// Prompt runs one turn and returns how it ended. Image, audio and embedded
// resource blocks are refused before sending unless the agent accepts them.
//
// Cancelling ctx does not abandon the turn: Prompt sends session/cancel and
// keeps waiting for the agent to end the turn (normally with StopCancelled),
// since the protocol has the turn end only when the prompt is answered. To
// stop waiting on an agent that never answers, close the Conn. When Prompt
// returns, every update the agent sent before its answer has been delivered.
func (c *Conn) Prompt(ctx context.Context, req *PromptRequest) (*PromptResponse, error) {
	return c.PromptThen(ctx, req, nil)
}

// PromptThen is Prompt with a hook that ends the turn in stream order: then
// runs on the dispatch goroutine exactly where the agent's answer sits in its
// output, after every message sent before the answer and before any sent
// after it (late updates). A host emits its turn-end there so nothing is
// reported on the wrong side of it. then is not called when no answer
// arrives (the connection ended); Prompt's error reports that.
func (c *Conn) PromptThen(ctx context.Context, req *PromptRequest, then func(*PromptResponse, error)) (*PromptResponse, error) {
	if err := c.require("session/prompt", nil); err != nil {
		return nil, err
	}
	caps := c.Agent().AgentCapabilities.PromptCapabilities
	for i, b := range req.Prompt {
		ok := true
		switch b.Type {
		case ContentImage:
			ok = caps.Image
		case ContentAudio:
			ok = caps.Audio
		case ContentResource:
			ok = caps.EmbeddedContext
		}
		if !ok {
			return nil, fmt.Errorf("acpclient: session/prompt: block %d is %s: %w", i, b.Type, ErrUnsupported)
		}
	}
	var hook func(json.RawMessage, *Error)
	if then != nil {
		hook = func(raw json.RawMessage, e *Error) {
			if e != nil {
				then(nil, &CallError{Method: "session/prompt", Err: e})
				return
			}
			var resp PromptResponse
			if err := lenientUnmarshal(raw, &resp); err != nil {
				then(nil, fmt.Errorf("acpclient: session/prompt: decoding result: %w", err))
				return
			}
			then(&resp, nil)
		}
	}
	oc, _, err := c.send("session/prompt", req, hook)
	if err != nil {
		return nil, c.drainOnClose(context.WithoutCancel(ctx), err)
	}
	if sent := wire.Sent(ctx); sent != nil {
		sent()
	}
	err = oc.wait(ctx)
	if err != nil && ctx.Err() != nil && c.Err() == nil {
		// A turn is cancelled, not abandoned: its answer still comes.
		_ = c.Cancel(context.Background(), req.SessionID)
		err = oc.wait(c.ctx)
	}
	raw, err := c.answer(context.WithoutCancel(ctx), "session/prompt", oc, err)
	if err != nil {
		return nil, err
	}
	var resp PromptResponse
	if err := lenientUnmarshal(raw, &resp); err != nil {
		return nil, fmt.Errorf("acpclient: session/prompt: decoding result: %w", err)
	}
	return &resp, nil
}

// Cancel asks the agent to stop the session's running turn. The caller must
// still answer the session's pending permission requests with
// PermissionCancelled; the turn ends when Prompt returns.
func (c *Conn) Cancel(ctx context.Context, sessionID string) error {
	return c.Notify(ctx, "session/cancel", &SessionRef{SessionID: sessionID})
}

// SetMode switches the session's mode to one of its available modes.
func (c *Conn) SetMode(ctx context.Context, req *SetModeRequest) error {
	if err := c.require("session/set_mode", nil); err != nil {
		return err
	}
	return c.call(ctx, "session/set_mode", req, nil)
}

// SetConfigOption sets a config option and returns the complete new list.
func (c *Conn) SetConfigOption(ctx context.Context, req *SetConfigOptionRequest) (*SetConfigOptionResponse, error) {
	if err := c.require("session/set_config_option", nil); err != nil {
		return nil, err
	}
	var resp SetConfigOptionResponse
	if err := c.call(ctx, "session/set_config_option", req, &resp); err != nil {
		return nil, err
	}
	return &resp, nil
}

// SetModel calls the legacy session/set_model. Use it only with agents that
// returned Models and offer no config option of category "model"; newer
// agents answer -32601.
func (c *Conn) SetModel(ctx context.Context, req *SetModelRequest) error {
	if err := c.require("session/set_model", nil); err != nil {
		return err
	}
	return c.call(ctx, "session/set_model", req, nil)
}
