package kiro

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/bridge"
)

// kiro-cli vendor names and timings.
const (
	metadataNotif   = "_kiro.dev/metadata"
	compactionNotif = "_kiro.dev/compaction/status"
	commandMethod   = "_kiro.dev/commands/execute"
	// CompactMetadataWait is how long bridge.Session.Compact waits, after a
	// manual compaction completed, for the metadata frame that measures the
	// compacted context (kiro-cli sends it about a second later).
	CompactMetadataWait = 5 * time.Second
	// CompactionNoticeCooldown is how long repeated compaction failures
	// stay quiet after the first ones were shown.
	CompactionNoticeCooldown = 60 * time.Second
	// compactionNoticesShown is how many failures in a row are shown
	// one by one.
	compactionNoticesShown = 2
)

// ContinuePrompt is sent to the same live session to recover a turn a
// transient backend error broke after it had produced output.
const ContinuePrompt = "Your previous response was interrupted by a temporary backend error. " +
	"Continue exactly where you stopped. Do not repeat text you already wrote and do not re-run tools that already completed."

// Profile runs "kiro-cli acp [--agent NAME]", the agent being
// bridge.LaunchOptions.AgentMode (kiro-cli takes any agent name at launch). Before every start it
// writes the workspace overlay <cwd>/.kiro/settings/cli.json (reasoning
// effort for the model, MCP tool search), merging with what is there.
// bridge.Session.SetEffort rewrites the overlay and pushes the level live with
// the /effort command (_kiro.dev/commands/execute, args {level}); it is
// refused for models outside the effort allowlist (EffortKey). A
// saved session is loaded only when kiro-cli's transcript
// ~/.kiro/sessions/cli/<id>.json exists on the agent's host. Its context
// meter comes from _kiro.dev/metadata percentages and usage_update sizes;
// _kiro.dev/compaction/status is its compaction report, with failure notices
// backed off. Transient backend errors (-32603 InternalServerError,
// DispatchFailure, ConnectionReset) are retried before output and recovered
// once per user turn after it.
// Its mode table reports --trust-all-tools, and --trust-tools naming a
// tool that changes things, in the extra arguments as launch escalations.
// Its agents are its ACP modes: kiro_default asks, and each other agent's
// spec (<cwd>/.kiro/agents/NAME.json, else ~/.kiro/agents/NAME.json, read
// on the agent's host when a session opens) says whether it asks: one
// that trusts, or pre-approves, a tool that changes things acts unasked.
var Profile = &bridge.Profile{
	Name: "kiro", Aliases: []string{"kiro-cli"}, Title: "Kiro CLI",
	EnvNames:          []string{"KIRO_*"},
	Binaries:          []string{"kiro-cli"},
	Args:              args,
	AgentModeAtLaunch: func(string) bool { return true },
	NewProvider:       newProvider,
	BeforeSpawn:       WriteOverlay,
	Modes:             modes,
}

func args(o bridge.LaunchOptions) ([]string, error) {
	if _, err := bridge.VendorOptions[Options](o); err != nil {
		return nil, err
	}
	args := []string{"acp"}
	if o.AgentMode != "" {
		args = append(args, "--agent", o.AgentMode)
	}
	return args, nil
}

// windows is the static context window table, used until kiro-cli
// reports the served window in a usage_update.
var windows = []struct {
	match  string
	tokens int64
}{
	{"[1m]", 1_000_000},
	{"opus", 200_000}, {"sonnet", 200_000}, {"haiku", 200_000}, {"fable", 200_000},
	{"gpt-5", 400_000}, {"gpt", 128_000},
	{"qwen", 128_000}, {"deepseek", 128_000}, {"glm", 128_000}, {"minimax", 200_000},
}

// ContextWindow returns the static context window of a kiro-cli model,
// 0 when the table does not know it.
func ContextWindow(model string) int64 {
	m := strings.ToLower(model)
	for _, w := range windows {
		if strings.Contains(m, w.match) {
			return w.tokens
		}
	}
	return 0
}

// kiro is the state of one kiro-cli launch.
type kiro struct {
	launch *bridge.Launch

	mu       sync.Mutex
	sessions map[string]*session
}

type session struct {
	failStreak    int
	cooldownUntil time.Time
	// awaitMeasure is closed when a percentage arrives after a completed
	// compaction; nil when nobody waits.
	awaitMeasure chan struct{}
	compacted    bool // a completed compaction awaits its measurement
	compactDone  chan struct{}
}

func newProvider(l *bridge.Launch) *bridge.Provider {
	k := &kiro{launch: l, sessions: map[string]*session{}}
	return &bridge.Provider{
		Name:              "kiro",
		CanResume:         k.canResume,
		Notification:      k.notification,
		ContextWindow:     ContextWindow,
		Compact:           k.compact,
		ReportsCompaction: true,
		SetEffort:         k.setEffort,
		TransientError:    TransientError,
		RetryBackoff:      []time.Duration{time.Second, 2 * time.Second, 4 * time.Second},
		ContinuePrompt:    ContinuePrompt,
	}
}

// clock is the launch's time source (StartProfile always sets one).
func (k *kiro) clock() bridge.Clock { return k.launch.Options().Clock }

func (k *kiro) session(id string) *session {
	s := k.sessions[id]
	if s == nil {
		s = &session{}
		k.sessions[id] = s
	}
	return s
}

// TranscriptPath is where kiro-cli keeps a session's transcript, under
// the agent host's home directory.
func TranscriptPath(home, sessionID string) string {
	return filepath.Join(home, ".kiro", "sessions", "cli", sessionID+".json")
}

// canResume is the resume guard: loading a session whose transcript is gone
// would replay nothing useful and inflate the context, so it is created
// anew instead.
func (k *kiro) canResume(ctx context.Context, sessionID string) bool {
	if sessionID == "" || strings.ContainsAny(sessionID, `/\`) || strings.Contains(sessionID, "..") {
		return false
	}
	o := k.launch.Options()
	ok, err := o.HostFS().Exists(ctx, TranscriptPath(o.HostHome(), sessionID))
	return err == nil && ok
}

func (k *kiro) notification(method string, params json.RawMessage) (string, []bridge.Event, bool) {
	switch method {
	case metadataNotif:
		var m struct {
			SessionID              string   `json:"sessionId"`
			ContextUsagePercentage *float64 `json:"contextUsagePercentage"`
		}
		if json.Unmarshal(params, &m) != nil || m.ContextUsagePercentage == nil {
			return "", nil, false // credits and other metadata: passed on as ext events
		}
		k.mu.Lock()
		ks := k.session(m.SessionID)
		ks.compacted = false
		if ks.awaitMeasure != nil {
			close(ks.awaitMeasure)
			ks.awaitMeasure = nil
		}
		k.mu.Unlock()
		pct := min(100, max(0, *m.ContextUsagePercentage))
		return m.SessionID, []bridge.Event{{Kind: bridge.KindUsage, Usage: &bridge.Usage{Known: true, Percent: pct}, Method: method, Raw: params}}, true
	case compactionNotif:
		return k.compactionStatus(method, params)
	}
	return "", nil, false
}

// compactionReport is the params of _kiro.dev/compaction/status; the
// status may come as a word or as an object with a type.
type compactionReport struct {
	SessionID string          `json:"sessionId"`
	Status    json.RawMessage `json:"status"`
	Message   string          `json:"message"`
	Error     string          `json:"error"`
	Summary   json.RawMessage `json:"summary"`
}

func (k *kiro) compactionStatus(method string, params json.RawMessage) (string, []bridge.Event, bool) {
	var p compactionReport
	if json.Unmarshal(params, &p) != nil {
		return "", nil, false
	}
	status := ""
	if json.Unmarshal(p.Status, &status) != nil {
		var obj struct {
			Type    string `json:"type"`
			Status  string `json:"status"`
			Message string `json:"message"`
		}
		_ = json.Unmarshal(p.Status, &obj)
		status = obj.Type + obj.Status
		if p.Message == "" {
			p.Message = obj.Message
		}
	}
	if p.Message == "" {
		p.Message = p.Error
	}
	c := &bridge.Compaction{Status: bridge.NormalizeCompactionStatus(strings.ToLower(status)), Message: p.Message, Summary: bridge.ContentText(p.Summary)}
	events := []bridge.Event{{Kind: bridge.KindCompaction, Compaction: c, Method: method, Raw: params}}
	now := k.clock().Now()
	k.mu.Lock()
	defer k.mu.Unlock()
	ks := k.session(p.SessionID)
	switch c.Status {
	case bridge.CompactionCompleted:
		ks.failStreak, ks.cooldownUntil = 0, time.Time{}
		ks.compacted = true
		if ks.compactDone != nil {
			close(ks.compactDone)
			ks.compactDone = nil
		}
	case bridge.CompactionFailed:
		ks.failStreak++
		if notice := ks.failureNotice(now, p.Message); notice != "" {
			events = append(events, bridge.Event{Kind: bridge.KindNotice, Text: notice})
		}
		if ks.compactDone != nil {
			close(ks.compactDone)
			ks.compactDone = nil
		}
	}
	return p.SessionID, events, true
}

// failureNotice applies the notice backoff: the first failures in a row are
// shown as they come, later ones are quiet for a cooldown, after which one
// collapsed notice sums them up.
func (ks *session) failureNotice(now time.Time, message string) string {
	if ks.failStreak <= compactionNoticesShown {
		if message == "" {
			message = "no reason given"
		}
		return "Compaction failed: " + message
	}
	if ks.cooldownUntil.IsZero() || now.Before(ks.cooldownUntil) {
		if ks.cooldownUntil.IsZero() {
			ks.cooldownUntil = now.Add(CompactionNoticeCooldown)
		}
		return ""
	}
	ks.cooldownUntil = now.Add(CompactionNoticeCooldown)
	return fmt.Sprintf("Compaction failed %dx in a row. Consider running /compact manually.", ks.failStreak)
}

// compact runs kiro-cli's /compact command, then waits up to
// CompactMetadataWait for the metadata that measures the compacted
// context, so the meter shows real numbers. The agent's death ends either
// wait at once with its exit error.
func (k *kiro) compact(ctx context.Context, conn *acpclient.Conn, sessionID string) (string, error) {
	k.mu.Lock()
	ks := k.session(sessionID)
	done := make(chan struct{})
	ks.compactDone = done
	k.mu.Unlock()
	resp, err := conn.Prompt(ctx, &acpclient.PromptRequest{SessionID: sessionID, Prompt: []acpclient.ContentBlock{acpclient.TextBlock("/compact")}})
	if err != nil {
		return "", fmt.Errorf("kiro: /compact: %w", err)
	}
	if resp.StopReason == acpclient.StopCancelled {
		return "", fmt.Errorf("kiro: /compact: cancelled")
	}
	clock := k.clock()
	// waitUntil waits for ch within the grace; the agent's death ends the
	// wait at once with its exit error (seed 001: process death
	// propagates), since nothing it would have sent can come any more.
	waitUntil := func(ch <-chan struct{}, what string) (bool, error) {
		timeout := make(chan struct{})
		t := clock.AfterFunc(CompactMetadataWait, func() { close(timeout) })
		defer t.Stop()
		select {
		case <-ch:
			return true, nil
		case <-conn.Done():
			return false, fmt.Errorf("kiro: /compact: the agent ended while the host waited for %s: %w", what, conn.Err())
		case <-timeout:
		case <-ctx.Done():
		}
		return false, nil
	}
	if ok, err := waitUntil(done, "the compaction status"); !ok {
		return "", err // no status came: the meter corrects itself on the next turn
	}
	k.mu.Lock()
	if !ks.compacted {
		k.mu.Unlock()
		return "", nil
	}
	measured := make(chan struct{})
	ks.awaitMeasure = measured
	k.mu.Unlock()
	_, err = waitUntil(measured, "the measurement of the compacted context")
	k.mu.Lock()
	if ks.awaitMeasure == measured {
		ks.awaitMeasure = nil
	}
	k.mu.Unlock()
	return "", err
}

// setEffort changes the effort of a kiro-cli session: it refuses levels
// kiro-cli does not have and models outside its allowlist (EffortKey),
// records the effort in the launch options and rewrites the workspace
// overlay, so it holds after a respawn (also when the live push below
// fails), then pushes it to the live process with the /effort command.
func (k *kiro) setEffort(ctx context.Context, conn *acpclient.Conn, sessionID string, effort string) error {
	if !slices.Contains(effortLevels, effort) {
		return fmt.Errorf("kiro: %w", bridge.UnknownEffortError(effort, effortLevels))
	}
	l := k.launch
	if model := l.Options().Model; EffortKey(model) == "" {
		return fmt.Errorf("kiro: model %q has no reasoning effort setting: %w", model, acpclient.ErrUnsupported)
	}
	o := l.Update(func(o *bridge.LaunchOptions) { o.Effort = effort })
	if err := WriteOverlay(ctx, o); err != nil {
		return err
	}
	return command(ctx, conn, sessionID, "effort", map[string]string{"level": effort})
}

// command runs a kiro-cli slash command through _kiro.dev/commands/execute
// in the object form ({command, args}), the one kiro-cli answers.
func command(ctx context.Context, conn *acpclient.Conn, sessionID, name string, args map[string]string) error {
	params := struct {
		SessionID string `json:"sessionId"`
		Command   struct {
			Command string            `json:"command"`
			Args    map[string]string `json:"args"`
		} `json:"command"`
	}{SessionID: sessionID}
	params.Command.Command, params.Command.Args = name, args
	var result struct {
		Success *bool  `json:"success"`
		Message string `json:"message"`
	}
	if err := conn.Call(ctx, commandMethod, params, &result); err != nil {
		return fmt.Errorf("kiro: /%s: %w", name, err)
	}
	if result.Success != nil && !*result.Success {
		if result.Message == "" {
			result.Message = "no reason given"
		}
		return fmt.Errorf("kiro: /%s refused: %s", name, result.Message)
	}
	return nil
}

// TransientError reports kiro-cli's transient backend failures: -32603
// with InternalServerError, DispatchFailure or ConnectionReset. Auth and
// validation errors are not transient.
func TransientError(err error) bool {
	var e *acpclient.Error
	if !errors.As(err, &e) || e.Code != acpclient.CodeInternalError {
		return false
	}
	text := strings.ToLower(e.Message + " " + string(e.Data))
	for _, kind := range []string{"internalservererror", "dispatchfailure", "connectionreset"} {
		if strings.Contains(text, kind) {
			return true
		}
	}
	return false
}
