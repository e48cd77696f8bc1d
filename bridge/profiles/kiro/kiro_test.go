package kiro

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/acptest"
	"github.com/acphost/acphost/bridge"
	"github.com/acphost/acphost/internal/bridgetest"
	"github.com/acphost/acphost/internal/fakebin"
	"github.com/acphost/acphost/internal/fakeclock"
	"github.com/acphost/acphost/internal/waitfor"
)

func TestKiroLaunchArgs(t *testing.T) {
	bin := acptest.BuildBinary(t)
	for _, tt := range []struct {
		agent string
		want  []string
	}{
		{"", []string{"acp"}},
		{"kirocrew-dev", []string{"acp", "--agent", "kirocrew-dev"}},
	} {
		cmd, _, err := Profile.Command(context.Background(), bridge.LaunchOptions{Binary: bin, AgentMode: tt.agent, ExtraArgs: []string{"--trust-all-tools"}})
		if err != nil {
			t.Fatal(err)
		}
		if want := append(tt.want, "--trust-all-tools"); !reflect.DeepEqual(cmd.Args, want) {
			t.Errorf("agent %q: args %q, want %q", tt.agent, cmd.Args, want)
		}
	}
}

// recordingFS is a HostFS that answers Exists from a set and records the
// paths asked, standing in for an SSH workspace's remote check.
type recordingFS struct {
	bridge.LocalFS
	mu     sync.Mutex
	exists map[string]bool
	asked  []string
}

func (f *recordingFS) Exists(_ context.Context, path string) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked = append(f.asked, path)
	return f.exists[path], nil
}

func startKiro(t *testing.T, h *bridge.Host, script acptest.Script, o bridge.LaunchOptions, cfg bridge.Config) (*bridge.Bridge, *fakebin.Installed) {
	t.Helper()
	in := fakebin.Install(t, t.TempDir(), "kiro-cli", script, "")
	o.Binary = in.Path
	if cfg.ID == "" {
		cfg.ID = "kiro"
	}
	b, err := h.StartProfile(bridgetest.Context(t), Profile, o, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return b, in
}

func TestKiroResumeGuard(t *testing.T) {
	tests := []struct {
		name       string
		transcript bool
		want       string
	}{
		{"transcript present: load", true, "session/load"},
		{"transcript gone: new session", false, "session/new"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, rec := bridgetest.NewHost(t, nil)
			home := "/home/remote-user"
			path := "/home/remote-user/.kiro/sessions/cli/k-old.json"
			fsys := &recordingFS{exists: map[string]bool{path: tt.transcript}}
			script := acptest.Script{LoadSession: acptest.LoadSessionScript{Sessions: []string{"k-old"}}}
			b, in := startKiro(t, h, script, bridge.LaunchOptions{FS: fsys, Home: home}, bridge.Config{})
			s, err := b.OpenSession(bridgetest.Context(t), bridge.SessionConfig{Cwd: "/w", ResumeID: "k-old"})
			if err != nil {
				t.Fatal(err)
			}
			if got := fakebin.MethodsOf(in.Received(t)); !reflect.DeepEqual(got, []string{"initialize", tt.want}) {
				t.Fatalf("methods %q", got)
			}
			if !reflect.DeepEqual(fsys.asked, []string{path}) {
				t.Errorf("asked %q", fsys.asked)
			}
			ev := rec.WaitFor("ready", func(ev bridge.Event) bool { return ev.Kind == bridge.KindSession })
			if ev.SessionReady.Resumed != tt.transcript || (s.ID() == "k-old") != tt.transcript {
				t.Errorf("ready %+v, id %s", ev.SessionReady, s.ID())
			}
		})
	}
}

func kiroMeta(pct string) acptest.Step {
	return acptest.Step{Notify: &acptest.Notification{Method: "_kiro.dev/metadata", Params: bridgetest.Raw(`{"sessionId":"k1",` + pct + `}`)}}
}

func kiroCompaction(status string) acptest.Step {
	return acptest.Step{Notify: &acptest.Notification{Method: "_kiro.dev/compaction/status", Params: bridgetest.Raw(`{"sessionId":"k1","status":` + status + `}`)}}
}

func TestKiroContextMeter(t *testing.T) {
	h, rec := bridgetest.NewHost(t, nil)
	script := acptest.Script{
		NewSession: acptest.NewSessionScript{SessionIDs: []string{"k1"},
			Models: bridgetest.Raw(`{"currentModelId":"claude-opus-4.6","availableModels":[{"modelId":"claude-opus-4.6","name":"Opus"},{"modelId":"gpt-5.2","name":"GPT"},{"modelId":"mystery-1","name":"?"}]}`)},
		Prompts: []acptest.Turn{{Steps: []acptest.Step{
			kiroMeta(`"contextUsagePercentage":50`),                                            // no served window yet: the table's 200K
			bridgetest.Update(`{"sessionUpdate":"usage_update","used":100000,"size":1000000}`), // served [1m] window
			kiroMeta(`"contextUsagePercentage":12.5`),                                          // the served window wins
			kiroCompaction(`"completed"`),                                                      // used reset, window kept
			kiroMeta(`"credits":{"used":3}`),                                                   // no percentage: not a measurement
			kiroMeta(`"contextUsagePercentage":2`),
		}}},
	}
	b, _ := startKiro(t, h, script, bridge.LaunchOptions{}, bridge.Config{})
	s, err := b.OpenSession(bridgetest.Context(t), bridge.SessionConfig{Cwd: "/w", Model: "claude-opus-4.6"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Prompt(bridgetest.Context(t), acpclient.TextBlock("go")); err != nil {
		t.Fatal(err)
	}
	rec.WaitFor("turn end", func(ev bridge.Event) bool { return ev.Kind == bridge.KindTurnEnd })
	// A model switch rebases the window from the table and keeps the tokens.
	if err := s.SetModel(bridgetest.Context(t), "gpt-5.2"); err != nil {
		t.Fatal(err)
	}
	if err := s.SetModel(bridgetest.Context(t), "mystery-1"); err != nil {
		t.Fatal(err)
	}
	rec.WaitFor("last rebase", func(ev bridge.Event) bool { return ev.Kind == bridge.KindUsage && ev.Usage.Size == 0 })
	var got []string
	for _, ev := range rec.Of("kiro", "k1") {
		switch ev.Kind {
		case bridge.KindUsage:
			got = append(got, bridgetest.Describe(ev)+":"+jsonNum(ev.Usage.Percent))
		case bridge.KindCompaction, bridge.KindExt:
			got = append(got, bridgetest.Describe(ev))
		}
	}
	want := []string{
		"usage:true:100000/200000:50",
		"usage:true:100000/1000000:10",
		"usage:true:125000/1000000:12.5",
		"compaction:completed", "usage:false:0/1000000:0",
		"ext:_kiro.dev/metadata",
		"usage:true:20000/1000000:2",
		"usage:true:20000/400000:5",
		"usage:true:20000/0:0",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("meter\n got %q\nwant %q", got, want)
	}
}

func jsonNum(f float64) string { b, _ := json.Marshal(f); return string(b) }

func TestKiroManualCompactWaitsForTheMeasurement(t *testing.T) {
	h, rec := bridgetest.NewHost(t, nil)
	script := acptest.Script{
		NewSession: acptest.NewSessionScript{SessionIDs: []string{"k1"}},
		Prompts: []acptest.Turn{{Match: "/compact",
			Steps: []acptest.Step{kiroCompaction(`"started"`), kiroCompaction(`{"type":"completed"}`)},
			// kiro-cli measures the compacted context a moment later.
			After: []acptest.Step{{Sleep: acptest.Duration(300 * time.Millisecond)}, kiroMeta(`"credits":{"used":1}`), kiroMeta(`"contextUsagePercentage":3`)},
		}},
	}
	b, in := startKiro(t, h, script, bridge.LaunchOptions{}, bridge.Config{})
	s, err := b.OpenSession(bridgetest.Context(t), bridge.SessionConfig{Cwd: "/w", Model: "claude-sonnet-4.5"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Compact(bridgetest.Context(t)); err != nil {
		t.Fatal(err)
	}
	if u := s.Usage(); !u.Known || u.Percent != 3 || u.Used != 6000 {
		t.Fatalf("Compact returned before the measurement: %+v", u)
	}
	p := fakebin.ParamsOf(t, in.Received(t), "session/prompt")
	if text := p["prompt"].([]any)[0].(map[string]any)["text"]; text != "/compact" {
		t.Errorf("compact sent %v", text)
	}
	var got []string
	for _, ev := range rec.Of("kiro", "k1") {
		if ev.Kind == bridge.KindCompaction {
			got = append(got, bridgetest.Describe(ev))
		}
	}
	if want := []string{"compaction:started", "compaction:completed"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("compaction events %q, want %q (the status notifications only)", got, want)
	}
}

// Seed 001: the compaction wait lets the process's death propagate. An
// agent that dies after "completed" ends the wait at once, with its exit
// error; the clock never moves, so only the death can end it.
func TestKiroCompactWaitEndsWhenTheAgentDies(t *testing.T) {
	h, _ := bridgetest.NewHost(t, nil)
	clock := bridgetest.FakeClock{Clock: fakeclock.New()}
	code := 3
	for _, stage := range []struct {
		name  string
		steps []acptest.Step
		after []acptest.Step
	}{
		{"before the status", []acptest.Step{kiroCompaction(`"started"`)}, nil},
		{"before the measurement", []acptest.Step{kiroCompaction(`"started"`), kiroCompaction(`{"type":"completed"}`)}, nil},
	} {
		t.Run(stage.name, func(t *testing.T) {
			script := acptest.Script{
				NewSession: acptest.NewSessionScript{SessionIDs: []string{"k1"}},
				Prompts: []acptest.Turn{{Match: "/compact", Steps: stage.steps,
					After: []acptest.Step{{Stderr: "kiro: out of memory"}, {Exit: &code}}}},
			}
			b, _ := startKiro(t, h, script, bridge.LaunchOptions{Clock: clock}, bridge.Config{ID: "kiro-" + strings.ReplaceAll(stage.name, " ", "-")})
			s, err := b.OpenSession(bridgetest.Context(t), bridge.SessionConfig{Cwd: "/w", Model: "claude-sonnet-4.5"})
			if err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { _, err := s.Compact(bridgetest.Context(t)); done <- err }()
			err = waitfor.Recv(t, done, "the call to end after the agent died (the clock never moves: a wait on it would never end)")
			var exit *acpclient.ExitError
			if !errors.As(err, &exit) || !strings.Contains(err.Error(), "out of memory") {
				t.Fatalf("Compact returned %v, want the agent's exit error with its stderr", err)
			}
		})
	}
}

func TestKiroCompactionFailureNotices(t *testing.T) {
	clock := bridgetest.FakeClock{Clock: fakeclock.New()}
	p := Profile.NewProvider(bridge.NewLaunch(Profile, bridge.LaunchOptions{Clock: clock}))
	fail := func() []string {
		_, events, handled := p.Notification("_kiro.dev/compaction/status", bridgetest.Raw(`{"sessionId":"k1","status":"failed","message":"model busy"}`))
		if !handled {
			t.Fatal("compaction status not handled")
		}
		var notices []string
		for _, ev := range events {
			if ev.Kind == bridge.KindNotice {
				notices = append(notices, ev.Text)
			}
		}
		return notices
	}
	steps := []struct {
		advance time.Duration
		status  string
		want    []string
	}{
		{0, "failed", []string{"Compaction failed: model busy"}},
		{time.Second, "failed", []string{"Compaction failed: model busy"}},
		{time.Second, "failed", nil},      // third in a row: the cooldown starts
		{30 * time.Second, "failed", nil}, // still cooling down
		{31 * time.Second, "failed", []string{"Compaction failed 5x in a row. Consider running /compact manually."}},
		{time.Second, "failed", nil}, // a new cooldown
		{0, "completed", nil},        // resets the streak
		{time.Second, "failed", []string{"Compaction failed: model busy"}},
	}
	for i, st := range steps {
		clock.Advance(st.advance)
		var got []string
		if st.status == "failed" {
			got = fail()
		} else {
			p.Notification("_kiro.dev/compaction/status", bridgetest.Raw(`{"sessionId":"k1","status":"completed"}`))
		}
		if !reflect.DeepEqual(got, st.want) {
			t.Fatalf("step %d: notices %q, want %q", i, got, st.want)
		}
	}
}

func TestKiroOverlay(t *testing.T) {
	pct := func(f float64) *float64 { return &f }
	tokens := func(n int64) *int64 { return &n }
	tests := []struct {
		name     string
		existing string
		opts     bridge.LaunchOptions
		want     string
		wantErr  bool
	}{
		{
			name:     "claude effort, other family swept, unrelated kept",
			existing: `{"chat.defaultModel":"x","chat.modelDefaults":{"claude-opus-4.6":{"reasoning":{"effort":"low"},"output_config":{"max":1}},"other":{"reasoning":{"effort":"high"}}}}`,
			opts:     bridge.LaunchOptions{Model: "claude-opus-4.6", Effort: "xhigh"},
			want:     `{"chat.defaultModel":"x","chat.modelDefaults":{"claude-opus-4.6":{"output_config":{"effort":"xhigh","max":1}},"other":{"reasoning":{"effort":"high"}}}}`,
		},
		{
			name:     "gpt effort under reasoning",
			existing: `{"chat.modelDefaults":{"gpt-5.2":{"output_config":{"effort":"low"}}}}`,
			opts:     bridge.LaunchOptions{Model: "gpt-5.2", Effort: "high"},
			want:     `{"chat.modelDefaults":{"gpt-5.2":{"reasoning":{"effort":"high"}}}}`,
		},
		{
			name: "haiku takes no effort",
			opts: bridge.LaunchOptions{Model: "claude-haiku-4.5", Effort: "high"},
			want: `{}`,
		},
		{
			name:     "cleared effort sweeps both keys",
			existing: `{"chat.modelDefaults":{"claude-sonnet-4.5":{"output_config":{"effort":"max"}}}}`,
			opts:     bridge.LaunchOptions{Model: "claude-sonnet-4.5"},
			want:     `{}`,
		},
		{
			name: "tool search defaults",
			opts: bridge.LaunchOptions{Vendor: Options{ToolSearch: &ToolSearch{Enabled: true}}},
			want: `{"toolSearch.enabled":true,"toolSearch.minPct":5,"toolSearch.minTokens":50000}`,
		},
		{
			name:     "tool search thresholds clamped, forced zeros migrated",
			existing: `{"toolSearch.minPct":0,"toolSearch.minTokens":0}`,
			opts:     bridge.LaunchOptions{Vendor: Options{ToolSearch: &ToolSearch{Enabled: true, MinPct: pct(250), MinTokens: tokens(-3)}}},
			want:     `{"toolSearch.enabled":true,"toolSearch.minPct":100,"toolSearch.minTokens":0}`,
		},
		{
			name:     "tool search off drops the thresholds",
			existing: `{"toolSearch.enabled":true,"toolSearch.minPct":5,"toolSearch.minTokens":50000,"keep":1}`,
			opts:     bridge.LaunchOptions{Vendor: Options{ToolSearch: &ToolSearch{Enabled: false}}},
			want:     `{"keep":1,"toolSearch.enabled":false}`,
		},
		{
			name:     "a file that is not JSON is left alone",
			existing: `{broken`,
			opts:     bridge.LaunchOptions{Vendor: Options{ToolSearch: &ToolSearch{Enabled: true}}},
			want:     `{broken`,
			wantErr:  true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cwd := t.TempDir()
			path := OverlayPath(cwd)
			if tt.existing != "" {
				os.MkdirAll(filepath.Dir(path), 0o755)
				os.WriteFile(path, []byte(tt.existing), 0o600)
			}
			tt.opts.Cwd = cwd
			err := WriteOverlay(context.Background(), tt.opts)
			if (err != nil) != tt.wantErr {
				t.Fatalf("error %v", err)
			}
			data, _ := os.ReadFile(path)
			if tt.wantErr {
				if string(data) != tt.want {
					t.Fatalf("file changed to %s", data)
				}
				return
			}
			var got, want any
			if err := json.Unmarshal(data, &got); err != nil {
				t.Fatalf("%s: %v", data, err)
			}
			json.Unmarshal([]byte(tt.want), &want)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("overlay\n got %s\nwant %s", data, tt.want)
			}
			if tt.existing != "" {
				if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
					t.Errorf("mode %v not kept", fi.Mode().Perm())
				}
			}
		})
	}
}

func TestKiroOverlayWrittenBeforeEverySpawn(t *testing.T) {
	h, _ := bridgetest.NewHost(t, nil)
	cwd := t.TempDir()
	path := OverlayPath(cwd)
	b, in := startKiro(t, h, acptest.Script{}, bridge.LaunchOptions{Cwd: cwd, Model: "claude-opus-4.6", Effort: "high", Vendor: &Options{ToolSearch: &ToolSearch{Enabled: true}}}, bridge.Config{})
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("no overlay after the first start: %v", err)
	}
	os.Remove(path)
	if err := b.Relaunch(bridgetest.Context(t), func(o *bridge.LaunchOptions) { o.Effort = "max" }); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil || !strings.Contains(string(data), `"max"`) {
		t.Fatalf("overlay after the restart: %s %v", data, err)
	}
	if len(in.Launches(t)) != 2 {
		t.Fatalf("launches %q", in.Launches(t))
	}
}

func TestKiroPassesMCPServers(t *testing.T) {
	h, _ := bridgetest.NewHost(t, nil)
	home := t.TempDir()
	os.MkdirAll(filepath.Join(home, ".kiro", "sessions", "cli"), 0o755)
	os.WriteFile(TranscriptPath(home, "k-old"), []byte("{}"), 0o644)
	script := acptest.Script{LoadSession: acptest.LoadSessionScript{Sessions: []string{"k-old"}}}
	b, in := startKiro(t, h, script, bridge.LaunchOptions{Home: home}, bridge.Config{})
	servers := []acpclient.MCPServer{
		{Name: "kirocrew-core", Command: "/usr/bin/kirocrew-mcp", Args: []string{"core"}, Env: []acpclient.EnvVariable{}},
		{Name: "user-tools", Command: "/opt/tools/mcp", Args: []string{}, Env: []acpclient.EnvVariable{{Name: "MODE", Value: "x"}}},
	}
	for _, resume := range []string{"", "k-old"} {
		if _, err := b.OpenSession(bridgetest.Context(t), bridge.SessionConfig{Cwd: "/w", MCPServers: servers, ResumeID: resume}); err != nil {
			t.Fatal(err)
		}
	}
	msgs := in.Received(t)
	for _, method := range []string{"session/new", "session/load"} {
		got, _ := json.Marshal(fakebin.ParamsOf(t, msgs, method)["mcpServers"])
		if !strings.Contains(string(got), `"kirocrew-core"`) || !strings.Contains(string(got), `"MODE"`) {
			t.Errorf("%s mcpServers %s", method, got)
		}
	}
}

// miniAgent is an in-process ACP agent whose prompt answers come from a Go
// function, for behaviour that depends on how often a prompt was sent.
type miniAgent struct {
	prompt func(n int, text string) (chunks []string, err *acpclient.Error)

	mu      sync.Mutex
	prompts []string
}

func (m *miniAgent) Connect(ctx context.Context) (io.ReadWriteCloser, error) {
	client, agent := acpclient.NewInMemoryTransports()
	rwc, err := agent.Connect(ctx)
	if err != nil {
		return nil, err
	}
	go m.serve(rwc)
	return client.Connect(ctx)
}

func (m *miniAgent) serve(rwc io.ReadWriteCloser) {
	defer rwc.Close()
	var writeMu sync.Mutex
	send := func(v any) {
		b, _ := json.Marshal(v)
		writeMu.Lock()
		defer writeMu.Unlock()
		rwc.Write(append(b, '\n'))
	}
	r := bufio.NewReader(rwc)
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			return
		}
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Prompt []struct {
					Text string `json:"text"`
				} `json:"prompt"`
			} `json:"params"`
		}
		if json.Unmarshal(line, &msg) != nil || msg.ID == nil {
			continue
		}
		reply := map[string]any{"jsonrpc": "2.0", "id": msg.ID}
		switch msg.Method {
		case "initialize":
			reply["result"] = map[string]any{"protocolVersion": 1, "agentCapabilities": map[string]any{}, "authMethods": []any{}}
		case "session/new":
			reply["result"] = map[string]any{"sessionId": "k1"}
		case "session/prompt":
			m.mu.Lock()
			n := len(m.prompts)
			m.prompts = append(m.prompts, msg.Params.Prompt[0].Text)
			m.mu.Unlock()
			chunks, perr := m.prompt(n, msg.Params.Prompt[0].Text)
			for _, c := range chunks {
				send(map[string]any{"jsonrpc": "2.0", "method": "session/update", "params": map[string]any{"sessionId": "k1",
					"update": map[string]any{"sessionUpdate": "agent_message_chunk", "content": map[string]any{"type": "text", "text": c}}}})
			}
			if perr != nil {
				reply["error"] = perr
			} else {
				reply["result"] = map[string]any{"stopReason": "end_turn"}
			}
		default:
			reply["error"] = acpclient.NewError(acpclient.CodeMethodNotFound, "method not found")
		}
		send(reply)
	}
}

func (m *miniAgent) sent() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.prompts)
}

// autoAdvance moves a fake clock forward while timers besides the turn's
// watchdog are pending, until stop is closed.
func autoAdvance(c bridgetest.FakeClock, stop <-chan struct{}) {
	for {
		select {
		case <-stop:
			return
		case <-time.After(2 * time.Millisecond):
		}
		if c.Pending() >= 2 {
			c.Advance(500 * time.Millisecond)
		}
	}
}

func TestKiroTransientErrors(t *testing.T) {
	transient := &acpclient.Error{Code: -32603, Message: "Internal error", Data: bridgetest.Raw(`{"kind":"InternalServerError"}`)}
	reset := &acpclient.Error{Code: -32603, Message: "ConnectionReset: stream closed"}
	tests := []struct {
		name        string
		prompt      func(n int, text string) ([]string, *acpclient.Error)
		wantErr     bool
		wantPrompts []string
		wantText    []string
		wantNotices int
	}{
		{
			name: "retried with backoff before output",
			prompt: func(n int, _ string) ([]string, *acpclient.Error) {
				if n < 2 {
					return nil, transient
				}
				return []string{"Hello"}, nil
			},
			wantPrompts: []string{"go", "go", "go"}, wantText: []string{"Hello"}, wantNotices: 2,
		},
		{
			name:        "retries run out",
			prompt:      func(int, string) ([]string, *acpclient.Error) { return nil, reset },
			wantErr:     true,
			wantPrompts: []string{"go", "go", "go", "go"}, wantNotices: 3,
		},
		{
			name: "after output: recovered once with a continue instruction",
			prompt: func(n int, _ string) ([]string, *acpclient.Error) {
				if n == 0 {
					return []string{"Partial "}, transient
				}
				return []string{"rest."}, nil
			},
			wantPrompts: []string{"go", ContinuePrompt}, wantText: []string{"Partial ", "rest."}, wantNotices: 1,
		},
		{
			name: "after output: only once per user turn",
			prompt: func(n int, _ string) ([]string, *acpclient.Error) {
				return []string{"Partial "}, transient
			},
			wantErr:     true,
			wantPrompts: []string{"go", ContinuePrompt}, wantText: []string{"Partial ", "Partial "}, wantNotices: 1,
		},
		{
			name: "validation errors fail fast",
			prompt: func(int, string) ([]string, *acpclient.Error) {
				return nil, &acpclient.Error{Code: -32602, Message: "Invalid params"}
			},
			wantErr:     true,
			wantPrompts: []string{"go"},
		},
		{
			name: "other internal errors fail fast",
			prompt: func(int, string) ([]string, *acpclient.Error) {
				return nil, &acpclient.Error{Code: -32603, Message: "model refused the tool schema"}
			},
			wantErr:     true,
			wantPrompts: []string{"go"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, rec := bridgetest.NewHost(t, nil)
			clock := bridgetest.FakeClock{Clock: fakeclock.New()}
			agent := &miniAgent{prompt: tt.prompt}
			l := bridge.NewLaunch(Profile, bridge.LaunchOptions{Clock: clock})
			b, err := h.Start(bridgetest.Context(t), bridge.Config{ID: "kiro", Transport: agent, Provider: Profile.NewProvider(l), Clock: clock})
			if err != nil {
				t.Fatal(err)
			}
			s, err := b.OpenSession(bridgetest.Context(t), bridge.SessionConfig{Cwd: "/w"})
			if err != nil {
				t.Fatal(err)
			}
			stop := make(chan struct{})
			go autoAdvance(clock, stop)
			_, err = s.Prompt(bridgetest.Context(t), acpclient.TextBlock("go"))
			close(stop)
			if (err != nil) != tt.wantErr {
				t.Fatalf("Prompt error %v", err)
			}
			if tt.wantErr && !errors.Is(err, transient) && !strings.Contains(err.Error(), "-326") {
				t.Errorf("error %v does not carry the agent's error", err)
			}
			if got := agent.sent(); !reflect.DeepEqual(got, tt.wantPrompts) {
				t.Fatalf("prompts %q, want %q", got, tt.wantPrompts)
			}
			rec.WaitFor("turn end", func(ev bridge.Event) bool { return ev.Kind == bridge.KindTurnEnd })
			var text []string
			notices, turnStarts, turnEnds := 0, 0, 0
			for _, ev := range rec.Of("kiro", "k1") {
				switch ev.Kind {
				case bridge.KindText:
					text = append(text, ev.Text)
				case bridge.KindNotice:
					notices++
				case bridge.KindTurnStart:
					turnStarts++
				case bridge.KindTurnEnd:
					turnEnds++
				}
			}
			if !reflect.DeepEqual(text, tt.wantText) || notices != tt.wantNotices || turnStarts != 1 || turnEnds != 1 {
				t.Fatalf("text %q notices %d turn starts %d ends %d; want %q %d 1 1", text, notices, turnStarts, turnEnds, tt.wantText, tt.wantNotices)
			}
		})
	}
}
