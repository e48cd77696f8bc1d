package terminal

import "github.com/acphost/acphost/acpclient"

// Output is a piece of a command's output, or its end, for the tool row
// that shows it: the payload of a bridge terminal event (Event.Terminal).
type Output struct {
	// ID is the terminal's id (the agent's terminalId).
	ID string `json:"id"`
	// ToolCallID is the tool call whose row shows the output, when known.
	ToolCallID string `json:"toolCallId,omitempty"`
	// Source says where the output comes from: "client" (a terminal the
	// bridge runs for the agent), "meta" (the agent's own command, reported
	// in tool call _meta) or "update" (terminal session updates).
	Source string `json:"source"`
	// Data is the output since the previous event of the terminal: stdout
	// and stderr as the command wrote them. Consecutive pieces of one
	// terminal may be merged while the consumer lags.
	Data string `json:"data,omitempty"`
	// Truncated: output before Data was dropped to keep within the
	// terminal's byte limit.
	Truncated bool `json:"truncated,omitempty"`
	// Reset: Data replaces the output shown so far instead of continuing
	// it (an agent's authoritative snapshot of the output that does not
	// extend what was reported before).
	Reset bool `json:"reset,omitempty"`
	// Exit is set on the event that reports the command's end.
	Exit *acpclient.TerminalExitStatus `json:"exit,omitempty"`
	// Uncontained, on the event that reports the end of a command the
	// bridge ran, says why the command's processes cannot all be accounted
	// for: some it started (a daemon that left its session) may outlive it,
	// on a platform or host without the means to hold them (see Local and
	// SSH). Empty when every process it started was ended with it.
	Uncontained string `json:"uncontained,omitempty"`
}
