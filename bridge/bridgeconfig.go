package bridge

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/bridge/terminal"
)

// A Bridge's configuration: the agent it runs and how.

// defaultAgentQueueBytes is how much received, undelivered agent output a
// Bridge buffers before it stops reading from the agent, within its share
// of the Host's budget (HostOptions.MaxQueuedBytes).
const defaultAgentQueueBytes = 4 << 20

// Config describes one agent for a Bridge.
type Config struct {
	// ID names the bridge in events (default: "agent-N").
	ID string
	// Transport starts the agent; it is connected again to restart a dead
	// agent, so it must be reusable (CommandTransport is).
	Transport acpclient.Transport
	// Provider holds the agent's vendor specifics (default: plain ACP).
	Provider *Provider
	// ClientInfo is sent in initialize (default: acphost).
	ClientInfo *acpclient.Implementation
	// InitializeMeta is sent as initialize's _meta.
	InitializeMeta json.RawMessage
	// ClientCapabilitiesMeta and AuthCapabilitiesMeta are JSON objects
	// sent as clientCapabilities._meta and clientCapabilities.auth._meta
	// in initialize, merged with the bridge's own keys (which win): agents
	// offer some features only to clients that declare them there, such as
	// a gateway sign-in (AuthCapabilitiesMeta {"gateway": true}).
	ClientCapabilitiesMeta json.RawMessage
	AuthCapabilitiesMeta   json.RawMessage
	// AgentTerminalOutput asks agents to report the output of the commands
	// they run themselves while they run: it declares
	// clientCapabilities._meta.terminal_output, a terminal extension
	// several agents share, whose reports arrive as terminal events
	// (KindTerminal, Source "meta"). Set it only if the app shows terminal
	// events: an agent that honours it may then send a shell call's output
	// there instead of in the tool call's content. (Some agents report
	// output as _meta.terminal_output_delta without it; that is mapped the
	// same way.)
	AgentTerminalOutput bool
	// InactivityTimeout is the turn watchdog (default 10 minutes);
	// CancelGrace how long a cancelled turn (by the app or the watchdog)
	// may take to answer session/cancel before it ends anyway, with
	// ErrCancelIgnored, and the process is killed (default 10 seconds).
	InactivityTimeout time.Duration
	CancelGrace       time.Duration
	// Clock is the time source (default: the real clock).
	Clock Clock
	// Logger receives diagnostics (default: discard). It is also the
	// logger of the connection (unless Conn has its own) and of the
	// transport (unless it has its own; see acpclient.LogTransport), so
	// the agent's stderr lines show there too.
	Logger *slog.Logger
	// WireTrace logs every line to and from the agent on the connection's
	// logger at debug level, cut and redacted (acpclient.ConnOptions.WireTrace).
	WireTrace bool
	// ElicitationModes lists the elicitation modes the app renders ("form",
	// "url"); the agent may then ask the user questions (elicitation
	// events). Empty: elicitation is not offered to the agent.
	ElicitationModes []string
	// Conn configures the wire (line caps, queue budget). By default an
	// agent's received, undelivered output is bounded at 4 MiB, within its
	// share of the Host's budget (HostOptions.MaxQueuedBytes).
	Conn *acpclient.ConnOptions
	// EarlyUpdates bounds the updates held for session ids not known yet
	// (sent before session/new answers); the zero value takes the defaults.
	EarlyUpdates EarlyUpdateLimits
	// TerminalLogin runs an agent's own login command in a terminal the
	// user can type in, for terminal sign-in methods (see AuthRequest); it
	// returns nil when the command exited 0. Nil means the app cannot run
	// them, and they are not offered.
	TerminalLogin func(ctx context.Context, cmd TerminalLogin) error
	// AgentModes is the table of the agent's own modes and config options
	// (see ModeTable and Authority), for an agent without a profile; a
	// profile launch (Host.StartProfile) uses the profile's Modes unless
	// this is set. Nil: the host does not know whether the agent asks
	// before it acts, and its sessions report AuthorityUnknown.
	AgentModes *ModeTable
	// Terminals, when set, lets the agent run commands through terminal/*
	// (see terminal.Options and the package doc's Terminals): the
	// capability is then advertised, and each session's policy decides per
	// command. Nil: terminals are not offered.
	Terminals *terminal.Options
}
