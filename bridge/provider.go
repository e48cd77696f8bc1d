package bridge

import (
	"context"
	"encoding/json"
	"time"

	"github.com/acphost/acphost/acpclient"
)

// Provider describes what is particular about one agent program: vendor
// metadata, vendor notifications and vendor methods. It is data plus small
// hooks; the bridge itself is the same for every agent. The zero value is a
// plain ACP agent.
type Provider struct {
	// Name identifies the provider in events, errors and the store.
	Name string

	// ToolName returns the tool's own name from a tool call's _meta, when
	// the agent puts a more precise identity there than ACP's name field.
	ToolName func(meta json.RawMessage) string
	// ToolNameFromTitle returns the tool name a tool call's title carries
	// ("" for none), for agents whose older streams put the name there. It
	// is the last resort: a name from ToolName or ACP's name field wins.
	// IdentifierTitle is the usual choice.
	ToolNameFromTitle func(title string) string
	// ToolParent returns, from a tool call's _meta, the id of the tool
	// call it runs under (a subagent's task), for agents that say so
	// there; it becomes ToolCall.Parent.
	ToolParent func(meta json.RawMessage) string
	// UsageFromMeta reads context usage from an update's or a prompt
	// result's _meta, for agents that report it there.
	UsageFromMeta func(meta json.RawMessage) (used, size int64, ok bool)
	// Notification maps a vendor notification for a session to events (for
	// example usage percentages or compaction progress). Returning
	// handled=false passes it through as an ext event.
	Notification func(method string, params json.RawMessage) (sessionID string, events []Event, handled bool)
	// Update maps a session/update of a vendor kind (a sessionUpdate
	// starting with "_", such as "_vendor/compaction_update") to events
	// of the session it came for; update is the update object as sent. It
	// gets the first look at such kinds; returning handled=false passes the
	// update on as an ext event. Compaction and usage events it returns go
	// through the session's context meter like the Notification hook's.
	Update func(kind string, update json.RawMessage) (events []Event, handled bool)
	// SetExternalDirectories sends the session's complete list of granted
	// directories (an empty list included) after new or load, for agents
	// with a vendor method for it. A failure makes the session unusable.
	SetExternalDirectories func(ctx context.Context, conn *acpclient.Conn, sessionID string, dirs []string) error
	// SetEffort applies a reasoning effort for agents without a
	// thought_level config option, when a session opens and on
	// Session.SetEffort. It validates the level itself (wrapping
	// ErrUnknownEffort for levels the agent lacks).
	SetEffort func(ctx context.Context, conn *acpclient.Conn, sessionID, effort string) error
	// CanResume is asked before loading a saved session; false starts a new
	// session instead (e.g. when the agent's transcript is gone).
	CanResume func(ctx context.Context, sessionID string) bool
	// SteerRequest names the request that puts text into a running turn,
	// for agents with a vendor method for it: Session.Steer sends it
	// (SteerProvider) when the agent advertises no standard way, and
	// reports the steered text where the agent's answer arrives among its
	// updates. An error refuses the text before anything is sent.
	SteerRequest func(sessionID, text string) (method string, params any, err error)
	// Compact compacts the session's context natively and returns the
	// summary, for agents that advertise a method for it.
	Compact func(ctx context.Context, conn *acpclient.Conn, sessionID string) (summary string, err error)

	// CompactAvailable reports whether the running agent advertised the
	// native compaction Compact uses; nil means it always has. Without it
	// Session.Compact fails with acpclient.ErrUnsupported before sending
	// anything, so the app can fall back to its own summary-reset path.
	CompactAvailable func(agent *acpclient.InitializeResponse) bool
	// ReportsCompaction is set when the agent reports compaction itself
	// (vendor notifications or update kinds the Notification or Update
	// hook maps to compaction events); Session.Compact then adds no events
	// of its own.
	ReportsCompaction bool

	// ContextWindow returns the context window of a model from a static
	// table (0 when unknown). A window the agent reports wins over it; it
	// is used to turn a percentage into tokens and to rebase the meter
	// when the model changes.
	ContextWindow func(model string) int64
	// ModelsFromInitialize returns the models an agent lists in its
	// initialize answer (for agents that put them there), used when
	// session/new lists none.
	ModelsFromInitialize func(agent *acpclient.InitializeResponse) *acpclient.ModelState

	// TransientError reports a prompt failure worth retrying (a backend
	// hiccup, not an auth or validation error). Before the turn produced
	// output (text, thinking, tools, permission requests, or output of a
	// command the agent ran) the prompt is sent again after each RetryBackoff delay; after
	// output it is recovered once per user turn by sending ContinuePrompt
	// to the same session, keeping what was streamed.
	TransientError func(err error) bool
	RetryBackoff   []time.Duration
	ContinuePrompt string

	// LockedMode returns the execution mode the agent's current launch
	// forces on its sessions ("" for none); SetPolicy keeps it.
	LockedMode func() Mode

	// OnTurnStart and OnToolEnd return extra events derived from the
	// session's activity (for example a task list rebuilt from task
	// tools). OnTurnStart runs after turn_start, OnToolEnd after a tool
	// call ends.
	OnTurnStart func(sessionID string) []Event
	OnToolEnd   func(sessionID string, call *ToolCall) []Event
}
