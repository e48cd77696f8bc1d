package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/acphost/acphost/acpclient"
)

// CrewCoder's native approval policies (LaunchOptions.Approval).
const (
	CrewCoderReview     = "review" // the default: safe calls run, mutations and dangerous calls ask
	CrewCoderAlways     = "always"
	CrewCoderNever      = "never"
	CrewCoderFullAccess = "full-access" // no requests at all: the host's policy cannot interpose
	CrewCoderSandboxed  = "sandboxed"
)

// CrewCoderAgentProfiles are the values CrewCoder's --mode takes. They are
// CrewCoder's agent profiles, unrelated to the host's Ask/Plan/Build/Full.
var CrewCoderAgentProfiles = []string{"general", "crewcoder", "plugin", "extension"}

// CrewCoderApproval returns the approval policy to pass for a persisted or
// chosen value: one of the five policies, anything else (missing, old,
// invalid) failing closed to review.
func CrewCoderApproval(v string) string {
	switch v = strings.TrimSpace(v); v {
	case CrewCoderReview, CrewCoderAlways, CrewCoderNever, CrewCoderFullAccess, CrewCoderSandboxed:
		return v
	}
	return CrewCoderReview
}

// CrewCoderAgentProfile returns the --mode value for a choice, or "" for the
// configured default (also for anything that is not a CrewCoder profile,
// the host's own modes included).
func CrewCoderAgentProfile(v string) string {
	v = strings.TrimSpace(v)
	if slices.Contains(CrewCoderAgentProfiles, v) {
		return v
	}
	return ""
}

// CrewCoder vendor names.
const (
	crewCoderCompactMeta = "crewcoder/sessionCompact"
	crewCoderUsageMeta   = "crewcoder/usage"
	crewCoderToolMeta    = "crewcoder/tool"
	crewCoderCompaction  = "_crewcoder/compaction_update" // an update kind, and a notification in older builds
)

// CrewCoderProfile runs "crewcoder acp --approval POLICY [--mode PROFILE]".
// A concrete agent profile locks the host's execution mode to Build: the
// profile owns the agent's behaviour, and Build keeps the host's permission
// gate for what the approval policy still asks. Change the profile or the
// approval policy with Bridge.Relaunch. CrewCoder's vendor protocol is
// mapped as follows: usage from _meta["crewcoder/usage"], tool identity from
// _meta["crewcoder/tool"].name (then ACP's name, then a title that is a bare
// identifier, see IdentifierTitle), _crewcoder/compaction_update (a session
// update kind, and a notification in older builds) as the only source of
// compaction events, directory grants through
// session/set_external_directories, effort through
// session/set_reasoning_effort, Session.FollowUp through session/follow_up,
// Session.Compact through session/compact when initialize advertises it
// (the session keeps its id), and Task* tool results as todos events.
var CrewCoderProfile = &Profile{
	Name: "crewcoder", Title: "CrewCoder",
	Binaries:    []string{"crewcoder"},
	Args:        crewCoderArgs,
	NewProvider: newCrewCoderProvider,
}

func crewCoderArgs(o LaunchOptions) []string {
	args := []string{"acp", "--approval", CrewCoderApproval(o.Approval)}
	if p := CrewCoderAgentProfile(o.AgentProfile); p != "" {
		args = append(args, "--mode", p)
	}
	return args
}

func newCrewCoderProvider(l *Launch) *Provider {
	todos := newTodoBook()
	return &Provider{
		Name:                   "crewcoder",
		ToolName:               crewCoderToolName,
		ToolNameFromTitle:      IdentifierTitle,
		UsageFromMeta:          crewCoderUsage,
		Notification:           crewCoderNotification,
		Update:                 crewCoderUpdate,
		SetExternalDirectories: crewCoderSetExternalDirectories,
		SetEffort:              crewCoderSetEffort,
		FollowUp:               crewCoderFollowUp,
		Compact:                crewCoderCompact,
		CompactAvailable:       CrewCoderAdvertisesCompact,
		ReportsCompaction:      true,
		LockedMode: func() Mode {
			if CrewCoderAgentProfile(l.Options().AgentProfile) != "" {
				return ModeBuild
			}
			return ""
		},
		OnTurnStart: todos.clear,
		OnToolEnd:   todos.toolEnded,
	}
}

// CrewCoderAdvertisesCompact reports whether an initialize answer carries
// exactly _meta["crewcoder/sessionCompact"].method == "session/compact".
func CrewCoderAdvertisesCompact(agent *acpclient.InitializeResponse) bool {
	if agent == nil {
		return false
	}
	var meta map[string]json.RawMessage
	if json.Unmarshal(agent.Meta, &meta) != nil {
		return false
	}
	var adv struct {
		Method string `json:"method"`
	}
	return json.Unmarshal(meta[crewCoderCompactMeta], &adv) == nil && adv.Method == "session/compact"
}

func crewCoderToolName(meta json.RawMessage) string {
	var m map[string]json.RawMessage
	if json.Unmarshal(meta, &m) != nil {
		return ""
	}
	var tool struct {
		Name string `json:"name"`
	}
	if json.Unmarshal(m[crewCoderToolMeta], &tool) != nil {
		return ""
	}
	return tool.Name
}

func crewCoderUsage(meta json.RawMessage) (used, size int64, ok bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal(meta, &m) != nil || m[crewCoderUsageMeta] == nil {
		return 0, 0, false
	}
	var u struct {
		LastInputTokens *int64 `json:"lastInputTokens"`
		ContextWindow   int64  `json:"contextWindow"`
	}
	if json.Unmarshal(m[crewCoderUsageMeta], &u) != nil || u.LastInputTokens == nil {
		return 0, 0, false
	}
	return *u.LastInputTokens, u.ContextWindow, true
}

// crewCoderCompactionUpdate is CrewCoder's compaction report: the update
// object of a _crewcoder/compaction_update session update, or the params of
// the notification of the same name that older builds send. Both carry the
// same fields; the notification form names progress "progress".
type crewCoderCompactionUpdate struct {
	SessionID    string          `json:"sessionId"`
	CompactionID string          `json:"compactionId"`
	Status       string          `json:"status"`
	Phase        string          `json:"phase"`
	Automatic    bool            `json:"automatic"`
	Intent       string          `json:"intent"`
	Percent      *float64        `json:"percent"`
	Progress     *float64        `json:"progress"`
	Message      string          `json:"message"`
	Summary      json.RawMessage `json:"summary"`
}

// compaction maps the report onto a Compaction. A completed update whose
// phase is "skipped" changed nothing: it is reported as skipped, so the
// context meter keeps its value.
func (u *crewCoderCompactionUpdate) compaction() *Compaction {
	status := compactionStatus(u.Status)
	if u.Phase == CompactionSkipped {
		status = CompactionSkipped
	}
	c := &Compaction{ID: u.CompactionID, Status: status, Phase: u.Phase,
		Automatic: u.Automatic || u.Intent == "automatic", Message: u.Message, Summary: summaryText(u.Summary)}
	switch {
	case u.Percent != nil:
		c.Progress = *u.Percent
	case u.Progress != nil:
		c.Progress = *u.Progress
	}
	return c
}

// crewCoderUpdate maps the _crewcoder/compaction_update session update, the
// form CrewCoder sends compaction in.
func crewCoderUpdate(kind string, update json.RawMessage) ([]Event, bool) {
	if kind != crewCoderCompaction {
		return nil, false
	}
	var u crewCoderCompactionUpdate
	if err := json.Unmarshal(update, &u); err != nil {
		return nil, false
	}
	return []Event{{Kind: KindCompaction, Compaction: u.compaction()}}, true
}

// crewCoderNotification maps the notification form of the compaction
// report, which older CrewCoder builds send.
func crewCoderNotification(method string, params json.RawMessage) (string, []Event, bool) {
	if method != crewCoderCompaction {
		return "", nil, false
	}
	var u crewCoderCompactionUpdate
	if err := json.Unmarshal(params, &u); err != nil {
		return "", nil, false
	}
	return u.SessionID, []Event{{Kind: KindCompaction, Compaction: u.compaction(), Method: method, Raw: params}}, true
}

// summaryText reads a summary sent as a string or as content blocks.
func summaryText(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []acpclient.ContentBlock
	if json.Unmarshal(raw, &blocks) == nil {
		var b strings.Builder
		for _, blk := range blocks {
			b.WriteString(blk.Text)
		}
		return b.String()
	}
	return ""
}

func crewCoderSetExternalDirectories(ctx context.Context, conn *acpclient.Conn, sessionID string, dirs []string) error {
	params := struct {
		SessionID   string   `json:"sessionId"`
		Directories []string `json:"directories"`
	}{sessionID, dirs}
	if err := conn.Call(ctx, "session/set_external_directories", params, nil); err != nil {
		return fmt.Errorf("crewcoder: session/set_external_directories: %w", err)
	}
	return nil
}

func crewCoderSetEffort(ctx context.Context, conn *acpclient.Conn, sessionID, effort string) error {
	params := struct {
		SessionID string `json:"sessionId"`
		Effort    string `json:"effort"`
	}{sessionID, effort}
	if err := conn.Call(ctx, "session/set_reasoning_effort", params, nil); err != nil {
		return fmt.Errorf("crewcoder: session/set_reasoning_effort: %w", err)
	}
	return nil
}

// crewCoderFollowUp queues text into the running turn. CrewCoder takes the
// instruction as one string, {sessionId, message}, not as content blocks.
func crewCoderFollowUp(ctx context.Context, conn *acpclient.Conn, sessionID, text string) error {
	if strings.TrimSpace(text) == "" {
		return errors.New("crewcoder: session/follow_up: the message is empty")
	}
	params := struct {
		SessionID string `json:"sessionId"`
		Message   string `json:"message"`
	}{sessionID, text}
	if err := conn.Call(ctx, "session/follow_up", params, nil); err != nil {
		return fmt.Errorf("crewcoder: session/follow_up: %w", err)
	}
	return nil
}

// crewCoderCompact calls the advertised session/compact. CrewCoder rewrites
// the durable session in place: the session id stays, nothing restarts.
func crewCoderCompact(ctx context.Context, conn *acpclient.Conn, sessionID string) (string, error) {
	var result struct {
		Summary json.RawMessage `json:"summary"`
	}
	if err := conn.Call(ctx, "session/compact", acpclient.SessionRef{SessionID: sessionID}, &result); err != nil {
		return "", fmt.Errorf("crewcoder: session/compact: %w", err)
	}
	return summaryText(result.Summary), nil
}
