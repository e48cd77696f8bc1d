package acpclient

import "encoding/json"

// ProtocolVersion is the ACP version this package speaks.
const ProtocolVersion = 1

// Marker is a capability that is on when present ({}), off when absent or null.
type Marker struct {
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// Implementation names a client or an agent program.
type Implementation struct {
	Name    string          `json:"name"`
	Title   string          `json:"title,omitempty"`
	Version string          `json:"version"`
	Meta    json.RawMessage `json:"_meta,omitempty"`
}

// InitializeRequest is the params of "initialize". Conn.Initialize fills
// ProtocolVersion and the capabilities the Client implements.
type InitializeRequest struct {
	ProtocolVersion    int                `json:"protocolVersion"`
	ClientCapabilities ClientCapabilities `json:"clientCapabilities"`
	ClientInfo         *Implementation    `json:"clientInfo,omitempty"`
	Meta               json.RawMessage    `json:"_meta,omitempty"`
}

// ClientCapabilities is what the client offers the agent.
type ClientCapabilities struct {
	FS          FileSystemCapabilities     `json:"fs"`
	Terminal    bool                       `json:"terminal,omitempty"`
	Auth        *AuthCapabilities          `json:"auth,omitempty"`
	Elicitation *ElicitationCapabilities   `json:"elicitation,omitempty"`
	Session     *ClientSessionCapabilities `json:"session,omitempty"`
	// Plan (unstable) opts in to plan_update and plan_removed.
	Plan *Marker         `json:"plan,omitempty"`
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// FileSystemCapabilities says which fs/* methods the client serves.
type FileSystemCapabilities struct {
	ReadTextFile  bool            `json:"readTextFile"`
	WriteTextFile bool            `json:"writeTextFile"`
	Meta          json.RawMessage `json:"_meta,omitempty"`
}

// AuthCapabilities says which authentication flows the client can run.
type AuthCapabilities struct {
	// Terminal: the client can run the agent's terminal login methods.
	Terminal bool            `json:"terminal,omitempty"`
	Meta     json.RawMessage `json:"_meta,omitempty"`
}

// ElicitationCapabilities says which elicitation modes the client renders.
type ElicitationCapabilities struct {
	Form *Marker         `json:"form,omitempty"`
	URL  *Marker         `json:"url,omitempty"`
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// ClientSessionCapabilities are session-level client features.
type ClientSessionCapabilities struct {
	ConfigOptions *ConfigOptionsCapabilities `json:"configOptions,omitempty"`
	// Compaction (unstable) opts in to compaction updates.
	Compaction *Marker         `json:"compaction,omitempty"`
	Meta       json.RawMessage `json:"_meta,omitempty"`
}

// ConfigOptionsCapabilities says which config option types the client renders
// beyond select.
type ConfigOptionsCapabilities struct {
	Boolean *Marker         `json:"boolean,omitempty"`
	Meta    json.RawMessage `json:"_meta,omitempty"`
}

// InitializeResponse is the agent's answer to "initialize".
type InitializeResponse struct {
	ProtocolVersion   int               `json:"protocolVersion"`
	AgentCapabilities AgentCapabilities `json:"agentCapabilities"`
	AuthMethods       []AuthMethod      `json:"authMethods"`
	AgentInfo         *Implementation   `json:"agentInfo,omitempty"`
	Meta              json.RawMessage   `json:"_meta,omitempty"`
}

// AgentCapabilities is what the agent supports. Conn checks calls against it.
type AgentCapabilities struct {
	LoadSession         bool                  `json:"loadSession,omitempty"`
	PromptCapabilities  PromptCapabilities    `json:"promptCapabilities"`
	MCPCapabilities     MCPCapabilities       `json:"mcpCapabilities"`
	SessionCapabilities SessionCapabilities   `json:"sessionCapabilities"`
	Auth                AgentAuthCapabilities `json:"auth"`
	Meta                json.RawMessage       `json:"_meta,omitempty"`
}

// PromptCapabilities says which content a prompt may carry besides text and
// resource links.
type PromptCapabilities struct {
	Image           bool            `json:"image,omitempty"`
	Audio           bool            `json:"audio,omitempty"`
	EmbeddedContext bool            `json:"embeddedContext,omitempty"`
	Meta            json.RawMessage `json:"_meta,omitempty"`
}

// MCPCapabilities says which MCP transports the agent connects to besides stdio.
type MCPCapabilities struct {
	HTTP bool            `json:"http,omitempty"`
	SSE  bool            `json:"sse,omitempty"`
	ACP  bool            `json:"acp,omitempty"` // unstable
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// Takes reports whether the agent connects to an MCP server of s's
// transport: stdio always, the others when advertised.
func (m MCPCapabilities) Takes(s MCPServer) bool {
	switch s.Type {
	case "http":
		return m.HTTP
	case "sse":
		return m.SSE
	case "acp":
		return m.ACP
	}
	return true
}

// SessionCapabilities are the optional session methods the agent serves.
type SessionCapabilities struct {
	List                  *Marker         `json:"list,omitempty"`
	Delete                *Marker         `json:"delete,omitempty"`
	Resume                *Marker         `json:"resume,omitempty"`
	Close                 *Marker         `json:"close,omitempty"`
	AdditionalDirectories *Marker         `json:"additionalDirectories,omitempty"`
	Fork                  *Marker         `json:"fork,omitempty"` // unstable
	Meta                  json.RawMessage `json:"_meta,omitempty"`
	// Inject is the draft protocol's capability for session/inject
	// (unstable, proposed for v2): the agent takes user messages into a
	// session whose turn runs; its "modes" list the deliveries it offers
	// ("steer" into the running turn, "queue" after it). Kept raw while
	// the draft settles.
	Inject json.RawMessage `json:"inject,omitempty"`
}

// AgentAuthCapabilities are the agent's optional auth methods.
type AgentAuthCapabilities struct {
	Logout *Marker         `json:"logout,omitempty"`
	Meta   json.RawMessage `json:"_meta,omitempty"`
}

// Authentication method types (AuthMethod.Type).
const (
	AuthAgent    = "agent"
	AuthTerminal = "terminal"
	AuthEnvVar   = "env_var" // legacy: removed from the schema, still sent
)

// AuthMethod is a way to sign in to the agent. Type "agent" (or empty) is
// passed to Conn.Authenticate; "terminal" is run by relaunching the agent
// with Args and Env; "env_var" (legacy) names environment variables to set
// before authenticating. Unknown types are kept with their JSON in Raw and are
// not usable through Authenticate.
type AuthMethod struct {
	Type        string            `json:"type,omitempty"`
	ID          string            `json:"id"`
	Name        string            `json:"name"`
	Description string            `json:"description,omitempty"`
	Args        []string          `json:"args,omitempty"` // terminal
	Env         map[string]string `json:"env,omitempty"`  // terminal
	Vars        []AuthVar         `json:"vars,omitempty"` // env_var
	Link        string            `json:"link,omitempty"` // env_var
	Meta        json.RawMessage   `json:"_meta,omitempty"`

	Raw json.RawMessage `json:"-"`
}

// AuthVar is an environment variable an env_var auth method asks for.
type AuthVar struct {
	Name     string `json:"name"`
	Label    string `json:"label,omitempty"`
	Secret   bool   `json:"secret,omitempty"`
	Optional bool   `json:"optional,omitempty"`
}

type authMethodFields AuthMethod

// UnmarshalJSON decodes an auth method, keeping the JSON of unknown types.
func (m *AuthMethod) UnmarshalJSON(data []byte) error {
	var f authMethodFields
	if err := lenientUnmarshal(data, &f); err != nil {
		return err
	}
	*m = AuthMethod(f)
	switch m.Type {
	case "", AuthAgent, AuthTerminal, AuthEnvVar:
	default:
		m.Raw = append(json.RawMessage(nil), data...)
	}
	return nil
}

// AuthenticateRequest is the params of "authenticate".
type AuthenticateRequest struct {
	MethodID string          `json:"methodId"`
	Meta     json.RawMessage `json:"_meta,omitempty"`
}
