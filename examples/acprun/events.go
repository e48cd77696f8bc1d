package main

import (
	"encoding/json"
	"io"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/bridge"
)

// jsonEvent is one line of --events output. The first keys are the stable
// core every consumer can rely on; the rest carry the detail of the kinds
// that have any.
type jsonEvent struct {
	Bridge     string    `json:"bridge"`
	Session    string    `json:"session,omitempty"`
	Seq        uint64    `json:"seq"`
	Kind       string    `json:"kind"`
	Text       string    `json:"text,omitempty"`
	Tool       *jsonTool `json:"tool,omitempty"`
	StopReason string    `json:"stopReason,omitempty"`
	Replay     bool      `json:"replay"`
	Error      string    `json:"error,omitempty"`

	// Late marks updates that came after their turn had ended.
	Late bool `json:"late,omitempty"`
	// Method names the vendor notification or update of an ext event, or
	// "acphost/KIND" for a host event without a kind of its own above.
	Method       string                       `json:"method,omitempty"`
	Permission   *jsonPermission              `json:"permission,omitempty"`
	Plan         []acpclient.PlanEntry        `json:"plan,omitempty"`
	Todos        []bridge.Todo                `json:"todos,omitempty"`
	Usage        *bridge.Usage                `json:"usage,omitempty"`
	Compaction   *bridge.Compaction           `json:"compaction,omitempty"`
	AgentMode    string                       `json:"agentMode,omitempty"`
	Config       []acpclient.ConfigOption     `json:"configOptions,omitempty"`
	Commands     []acpclient.AvailableCommand `json:"commands,omitempty"`
	SessionInfo  *bridge.SessionInfo          `json:"sessionInfo,omitempty"`
	SessionReady *bridge.SessionReady         `json:"sessionReady,omitempty"`
	Auth         *bridge.AuthRequest          `json:"auth,omitempty"`
	Raw          json.RawMessage              `json:"raw,omitempty"`
}

type jsonTool struct {
	ID     string `json:"id"`
	Title  string `json:"title,omitempty"`
	Kind   string `json:"kind,omitempty"`
	Status string `json:"status,omitempty"`
	Name   string `json:"name,omitempty"`
}

type jsonPermission struct {
	ID      string                       `json:"id"`
	Options []acpclient.PermissionOption `json:"options"`
	// Decision is how acprun answered: allow, reject or cancelled.
	Decision string `json:"decision"`
}

// eventKinds maps the bridge's kinds to the names of --events. Kinds
// missing here are reported as "ext" with Method "acphost/KIND".
var eventKinds = map[bridge.Kind]string{
	bridge.KindText:        "text",
	bridge.KindThinking:    "thinking",
	bridge.KindToolStart:   "tool_start",
	bridge.KindToolUpdate:  "tool_update",
	bridge.KindToolEnd:     "tool_end",
	bridge.KindPermission:  "permission",
	bridge.KindPlan:        "plan",
	bridge.KindTodos:       "plan", // the task list, with Plan filled in for hosts that show plans
	bridge.KindUsage:       "usage",
	bridge.KindCompaction:  "compaction",
	bridge.KindAgentMode:   "agent_mode",
	bridge.KindConfig:      "config",
	bridge.KindCommands:    "commands",
	bridge.KindSessionInfo: "session_info",
	bridge.KindTurnStart:   "turn_start",
	bridge.KindTurnEnd:     "turn_end",
	bridge.KindError:       "error",
	bridge.KindExited:      "exited",
	bridge.KindExt:         "ext",
}

// jsonOutput writes one JSON object per event and line.
type jsonOutput struct {
	enc *json.Encoder
}

func newJSONOutput(w io.Writer) *jsonOutput {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return &jsonOutput{enc: enc}
}

func (o *jsonOutput) event(ev bridge.Event) { o.write(convert(ev)) }

func (o *jsonOutput) permission(ev bridge.Event, decide func() string) {
	j := convert(ev)
	decision := decide()
	if ev.Permission != nil {
		j.Permission = &jsonPermission{ID: ev.Permission.ID, Options: ev.Permission.Options, Decision: decision}
	}
	o.write(j)
}

func (o *jsonOutput) finish() {}

func (o *jsonOutput) write(j jsonEvent) {
	// Encoding these types cannot fail; a closed stdout is noticed by the
	// exit status of whoever reads it.
	_ = o.enc.Encode(j)
}

// convert maps a bridge event to its --events form.
func convert(ev bridge.Event) jsonEvent {
	j := jsonEvent{
		Bridge: ev.Bridge, Session: ev.Session, Seq: ev.Seq, Text: ev.Text, StopReason: ev.StopReason,
		Replay: ev.Replay, Late: ev.Late, Method: ev.Method,
		Plan: ev.Plan, Todos: ev.Todos, Usage: ev.Usage, Compaction: ev.Compaction, AgentMode: ev.AgentMode,
		Config: ev.ConfigOptions, Commands: ev.Commands, SessionInfo: ev.SessionInfo,
		SessionReady: ev.SessionReady, Auth: ev.Auth,
	}
	kind, ok := eventKinds[ev.Kind]
	if !ok {
		kind, j.Method = "ext", "acphost/"+string(ev.Kind)
	}
	j.Kind = kind
	if kind == "ext" {
		j.Raw = ev.Raw
	}
	if ev.Err != nil {
		j.Error = ev.Err.Error()
	}
	if t := ev.Tool; t != nil {
		j.Tool = &jsonTool{ID: t.ID, Title: t.Title, Kind: t.Kind, Status: t.Status, Name: t.Name}
	}
	return j
}
