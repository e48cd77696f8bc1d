package crewcoder

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/bridge"
)

// CrewCoder vendor names.
const (
	compactMeta    = "crewcoder/sessionCompact"
	usageMeta      = "crewcoder/usage"
	toolMeta       = "crewcoder/tool"
	compactionKind = "_crewcoder/compaction_update" // an update kind, and a notification in older builds
)

func newProvider(l *bridge.Launch) *bridge.Provider {
	todos := newTodoBook()
	return &bridge.Provider{
		Name:                   "crewcoder",
		ToolName:               toolName,
		ToolNameFromTitle:      bridge.IdentifierTitle,
		UsageFromMeta:          usage,
		Notification:           mapNotification,
		Update:                 mapUpdate,
		SetExternalDirectories: setExternalDirectories,
		SetEffort:              setEffort,
		SteerRequest:           followUp,
		Compact:                compact,
		CompactAvailable:       AdvertisesCompact,
		ReportsCompaction:      true,
		LockedMode: func() bridge.Mode {
			if AgentProfile(l.Options().AgentMode) != "" {
				return bridge.ModeBuild
			}
			return ""
		},
		OnTurnStart: todos.clear,
		OnToolEnd:   todos.toolEnded,
	}
}

// AdvertisesCompact reports whether an initialize answer carries exactly
// _meta["crewcoder/sessionCompact"].method == "session/compact".
func AdvertisesCompact(agent *acpclient.InitializeResponse) bool {
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
	return json.Unmarshal(meta[compactMeta], &adv) == nil && adv.Method == "session/compact"
}

func toolName(meta json.RawMessage) string {
	var m map[string]json.RawMessage
	if json.Unmarshal(meta, &m) != nil {
		return ""
	}
	var tool struct {
		Name string `json:"name"`
	}
	if json.Unmarshal(m[toolMeta], &tool) != nil {
		return ""
	}
	return tool.Name
}

func usage(meta json.RawMessage) (used, size int64, ok bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal(meta, &m) != nil || m[usageMeta] == nil {
		return 0, 0, false
	}
	var u struct {
		LastInputTokens *int64 `json:"lastInputTokens"`
		ContextWindow   int64  `json:"contextWindow"`
	}
	if json.Unmarshal(m[usageMeta], &u) != nil || u.LastInputTokens == nil {
		return 0, 0, false
	}
	return *u.LastInputTokens, u.ContextWindow, true
}

// compactionUpdate is CrewCoder's compaction report: the update
// object of a _crewcoder/compaction_update session update, or the params of
// the notification of the same name that older builds send. Both carry the
// same fields; the notification form names progress "progress".
type compactionUpdate struct {
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
func (u *compactionUpdate) compaction() *bridge.Compaction {
	status := bridge.NormalizeCompactionStatus(u.Status)
	if u.Phase == bridge.CompactionSkipped {
		status = bridge.CompactionSkipped
	}
	c := &bridge.Compaction{ID: u.CompactionID, Status: status, Phase: u.Phase,
		Automatic: u.Automatic || u.Intent == "automatic", Message: u.Message, Summary: bridge.ContentText(u.Summary)}
	switch {
	case u.Percent != nil:
		c.Progress = *u.Percent
	case u.Progress != nil:
		c.Progress = *u.Progress
	}
	return c
}

// mapUpdate maps the _crewcoder/compaction_update session update, the
// form CrewCoder sends compaction in.
func mapUpdate(kind string, update json.RawMessage) ([]bridge.Event, bool) {
	if kind != compactionKind {
		return nil, false
	}
	var u compactionUpdate
	if err := json.Unmarshal(update, &u); err != nil {
		return nil, false
	}
	return []bridge.Event{{Kind: bridge.KindCompaction, Compaction: u.compaction()}}, true
}

// notification maps the notification form of the compaction
// report, which older CrewCoder builds send.
func mapNotification(method string, params json.RawMessage) (string, []bridge.Event, bool) {
	if method != compactionKind {
		return "", nil, false
	}
	var u compactionUpdate
	if err := json.Unmarshal(params, &u); err != nil {
		return "", nil, false
	}
	return u.SessionID, []bridge.Event{{Kind: bridge.KindCompaction, Compaction: u.compaction(), Method: method, Raw: params}}, true
}

func setExternalDirectories(ctx context.Context, conn *acpclient.Conn, sessionID string, dirs []string) error {
	params := struct {
		SessionID   string   `json:"sessionId"`
		Directories []string `json:"directories"`
	}{sessionID, dirs}
	if err := conn.Call(ctx, "session/set_external_directories", params, nil); err != nil {
		return fmt.Errorf("crewcoder: %w", err) // acpclient names the method
	}
	return nil
}

func setEffort(ctx context.Context, conn *acpclient.Conn, sessionID, effort string) error {
	params := struct {
		SessionID string `json:"sessionId"`
		Effort    string `json:"effort"`
	}{sessionID, effort}
	if err := conn.Call(ctx, "session/set_reasoning_effort", params, nil); err != nil {
		return fmt.Errorf("crewcoder: %w", err) // acpclient names the method
	}
	return nil
}

// followUp is the request that queues text into the running turn.
// CrewCoder takes the instruction as one string, {sessionId, message}, not
// as content blocks.
func followUp(sessionID, text string) (string, any, error) {
	if strings.TrimSpace(text) == "" {
		return "", nil, errors.New("crewcoder: session/follow_up: the message is empty")
	}
	params := struct {
		SessionID string `json:"sessionId"`
		Message   string `json:"message"`
	}{sessionID, text}
	return "session/follow_up", params, nil
}

// compact calls the advertised session/compact. CrewCoder rewrites
// the durable session in place: the session id stays, nothing restarts.
func compact(ctx context.Context, conn *acpclient.Conn, sessionID string) (string, error) {
	var result struct {
		Summary json.RawMessage `json:"summary"`
	}
	if err := conn.Call(ctx, "session/compact", acpclient.SessionRef{SessionID: sessionID}, &result); err != nil {
		return "", fmt.Errorf("crewcoder: %w", err) // acpclient names the method
	}
	return bridge.ContentText(result.Summary), nil
}
