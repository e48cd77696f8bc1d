package bridge

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/acphost/acphost/acpclient"
)

// kiro-cli vendor names and timings.
const (
	kiroMetadataNotif   = "_kiro.dev/metadata"
	kiroCompactionNotif = "_kiro.dev/compaction/status"
	kiroCommandMethod   = "_kiro.dev/commands/execute"
	// KiroCompactMetadataWait is how long Session.Compact waits, after a
	// manual compaction completed, for the metadata frame that measures the
	// compacted context (kiro-cli sends it about a second later).
	KiroCompactMetadataWait = 5 * time.Second
	// KiroCompactionNoticeCooldown is how long repeated compaction failures
	// stay quiet after the first ones were shown.
	KiroCompactionNoticeCooldown = 60 * time.Second
	// kiroCompactionNoticesShown is how many failures in a row are shown
	// one by one.
	kiroCompactionNoticesShown = 2
)

// KiroContinuePrompt is sent to the same live session to recover a turn a
// transient backend error broke after it had produced output.
const KiroContinuePrompt = "Your previous response was interrupted by a temporary backend error. " +
	"Continue exactly where you stopped. Do not repeat text you already wrote and do not re-run tools that already completed."

// KiroProfile runs "kiro-cli acp [--agent NAME]". Before every start it
// writes the workspace overlay <cwd>/.kiro/settings/cli.json (reasoning
// effort for the model, MCP tool search), merging with what is there.
// Session.SetEffort rewrites the overlay and pushes the level live with
// the /effort command (_kiro.dev/commands/execute, args {level}); it is
// refused for models outside the effort allowlist (KiroEffortKey). A
// saved session is loaded only when kiro-cli's transcript
// ~/.kiro/sessions/cli/<id>.json exists on the agent's host. Its context
// meter comes from _kiro.dev/metadata percentages and usage_update sizes;
// _kiro.dev/compaction/status is its compaction report, with failure notices
// backed off. Transient backend errors (-32603 InternalServerError,
// DispatchFailure, ConnectionReset) are retried before output and recovered
// once per user turn after it.
var KiroProfile = &Profile{
	Name: "kiro", Aliases: []string{"kiro-cli"}, Title: "Kiro CLI",
	Binaries:    []string{"kiro-cli"},
	Args:        kiroArgs,
	NewProvider: newKiroProvider,
	BeforeSpawn: func(ctx context.Context, o LaunchOptions) error { return WriteKiroOverlay(ctx, o) },
}

func kiroArgs(o LaunchOptions) []string {
	args := []string{"acp"}
	if o.Agent != "" {
		args = append(args, "--agent", o.Agent)
	}
	return args
}

// kiroWindows is the static context window table, used until kiro-cli
// reports the served window in a usage_update.
var kiroWindows = []struct {
	match  string
	tokens int64
}{
	{"[1m]", 1_000_000},
	{"opus", 200_000}, {"sonnet", 200_000}, {"haiku", 200_000}, {"fable", 200_000},
	{"gpt-5", 400_000}, {"gpt", 128_000},
	{"qwen", 128_000}, {"deepseek", 128_000}, {"glm", 128_000}, {"minimax", 200_000},
}

// KiroContextWindow returns the static context window of a kiro-cli model,
// 0 when the table does not know it.
func KiroContextWindow(model string) int64 {
	m := strings.ToLower(model)
	for _, w := range kiroWindows {
		if strings.Contains(m, w.match) {
			return w.tokens
		}
	}
	return 0
}

// kiro is the state of one kiro-cli launch.
type kiro struct {
	launch *Launch

	mu       sync.Mutex
	sessions map[string]*kiroSession
}

type kiroSession struct {
	failStreak    int
	cooldownUntil time.Time
	// awaitMeasure is closed when a percentage arrives after a completed
	// compaction; nil when nobody waits.
	awaitMeasure chan struct{}
	compacted    bool // a completed compaction awaits its measurement
	compactDone  chan struct{}
}

func newKiroProvider(l *Launch) *Provider {
	k := &kiro{launch: l, sessions: map[string]*kiroSession{}}
	return &Provider{
		Name:              "kiro",
		CanResume:         k.canResume,
		Notification:      k.notification,
		ContextWindow:     KiroContextWindow,
		Compact:           k.compact,
		ReportsCompaction: true,
		SetEffort:         k.setEffort,
		TransientError:    KiroTransientError,
		RetryBackoff:      []time.Duration{time.Second, 2 * time.Second, 4 * time.Second},
		ContinuePrompt:    KiroContinuePrompt,
	}
}

func (k *kiro) clock() Clock {
	if c := k.launch.Options().Clock; c != nil {
		return c
	}
	return realClock{}
}

func (k *kiro) session(id string) *kiroSession {
	s := k.sessions[id]
	if s == nil {
		s = &kiroSession{}
		k.sessions[id] = s
	}
	return s
}

// KiroTranscriptPath is where kiro-cli keeps a session's transcript, under
// the agent host's home directory.
func KiroTranscriptPath(home, sessionID string) string {
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
	ok, err := hostFS(o).Exists(ctx, KiroTranscriptPath(agentHome(o), sessionID))
	return err == nil && ok
}

func hostFS(o LaunchOptions) HostFS {
	if o.FS != nil {
		return o.FS
	}
	return LocalFS{}
}

// agentHome returns the agent host's home directory.
func agentHome(o LaunchOptions) string {
	if o.Home != "" {
		return o.Home
	}
	return (&Resolver{Env: o.Env}).getenv("HOME")
}

func (k *kiro) notification(method string, params json.RawMessage) (string, []Event, bool) {
	switch method {
	case kiroMetadataNotif:
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
		return m.SessionID, []Event{{Kind: KindUsage, Usage: &Usage{Known: true, Percent: pct}, Method: method, Raw: params}}, true
	case kiroCompactionNotif:
		return k.compactionStatus(method, params)
	}
	return "", nil, false
}

// kiroCompactionStatus is the params of _kiro.dev/compaction/status; the
// status may come as a word or as an object with a type.
type kiroCompactionStatus struct {
	SessionID string          `json:"sessionId"`
	Status    json.RawMessage `json:"status"`
	Message   string          `json:"message"`
	Error     string          `json:"error"`
	Summary   json.RawMessage `json:"summary"`
}

func (k *kiro) compactionStatus(method string, params json.RawMessage) (string, []Event, bool) {
	var p kiroCompactionStatus
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
	c := &Compaction{Status: compactionStatus(strings.ToLower(status)), Message: p.Message, Summary: summaryText(p.Summary)}
	events := []Event{{Kind: KindCompaction, Compaction: c, Method: method, Raw: params}}
	now := k.clock().Now()
	k.mu.Lock()
	defer k.mu.Unlock()
	ks := k.session(p.SessionID)
	switch c.Status {
	case CompactionCompleted:
		ks.failStreak, ks.cooldownUntil = 0, time.Time{}
		ks.compacted = true
		if ks.compactDone != nil {
			close(ks.compactDone)
			ks.compactDone = nil
		}
	case CompactionFailed:
		ks.failStreak++
		if notice := ks.failureNotice(now, p.Message); notice != "" {
			events = append(events, Event{Kind: KindNotice, Text: notice})
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
func (ks *kiroSession) failureNotice(now time.Time, message string) string {
	if ks.failStreak <= kiroCompactionNoticesShown {
		if message == "" {
			message = "no reason given"
		}
		return "Compaction failed: " + message
	}
	if ks.cooldownUntil.IsZero() || now.Before(ks.cooldownUntil) {
		if ks.cooldownUntil.IsZero() {
			ks.cooldownUntil = now.Add(KiroCompactionNoticeCooldown)
		}
		return ""
	}
	ks.cooldownUntil = now.Add(KiroCompactionNoticeCooldown)
	return fmt.Sprintf("Compaction failed %dx in a row. Consider running /compact manually.", ks.failStreak)
}

// compact runs kiro-cli's /compact command, then waits up to
// KiroCompactMetadataWait for the metadata that measures the compacted
// context, so the meter shows real numbers.
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
	waitUntil := func(ch <-chan struct{}) bool {
		timeout := make(chan struct{})
		t := clock.AfterFunc(KiroCompactMetadataWait, func() { close(timeout) })
		defer t.Stop()
		select {
		case <-ch:
			return true
		case <-timeout:
		case <-ctx.Done():
		}
		return false
	}
	if !waitUntil(done) {
		return "", nil // no status came: the meter corrects itself on the next turn
	}
	k.mu.Lock()
	if !ks.compacted {
		k.mu.Unlock()
		return "", nil
	}
	measured := make(chan struct{})
	ks.awaitMeasure = measured
	k.mu.Unlock()
	waitUntil(measured)
	k.mu.Lock()
	if ks.awaitMeasure == measured {
		ks.awaitMeasure = nil
	}
	k.mu.Unlock()
	return "", nil
}

// setEffort changes the effort of a kiro-cli session: it refuses levels
// kiro-cli does not have and models outside its allowlist (KiroEffortKey),
// records the effort in the launch options and rewrites the workspace
// overlay, so it holds after a respawn (also when the live push below
// fails), then pushes it to the live process with the /effort command.
func (k *kiro) setEffort(ctx context.Context, conn *acpclient.Conn, sessionID string, effort string) error {
	if !slices.Contains(kiroEffortLevels, effort) {
		return fmt.Errorf("kiro: %w", effortLevelError(effort, kiroEffortLevels))
	}
	l := k.launch
	if model := l.Options().Model; KiroEffortKey(model) == "" {
		return fmt.Errorf("kiro: model %q has no reasoning effort setting: %w", model, acpclient.ErrUnsupported)
	}
	l.mu.Lock()
	l.opts.Effort = effort
	o := l.opts
	l.mu.Unlock()
	if err := WriteKiroOverlay(ctx, o); err != nil {
		return err
	}
	return kiroCommand(ctx, conn, sessionID, "effort", map[string]string{"level": effort})
}

// kiroCommand runs a kiro-cli slash command through _kiro.dev/commands/execute
// in the object form ({command, args}), the one kiro-cli answers.
func kiroCommand(ctx context.Context, conn *acpclient.Conn, sessionID, name string, args map[string]string) error {
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
	if err := conn.Call(ctx, kiroCommandMethod, params, &result); err != nil {
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

// KiroTransientError reports kiro-cli's transient backend failures: -32603
// with InternalServerError, DispatchFailure or ConnectionReset. Auth and
// validation errors are not transient.
func KiroTransientError(err error) bool {
	e := errorsAsCall(err)
	if e == nil || e.Code != acpclient.CodeInternalError {
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
