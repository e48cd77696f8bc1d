package bridge

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
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
	"github.com/acphost/acphost/internal/fakebin"
)

// authAnswerer answers auth_required events as they arrive.
func answerAuth(rec *recorder, answer func(*AuthRequest)) {
	go func() {
		seen := 0
		for {
			events, ch := rec.log.Since(seen)
			seen += len(events)
			for _, ev := range events {
				if ev.Kind == KindAuthRequired {
					answer(ev.Auth)
				}
			}
			select {
			case <-ch:
			case <-rec.done:
				return
			}
		}
	}()
}

func startPlain(t *testing.T, h *Host, script acptest.Script, pre string, cfg Config) (*Bridge, *fakebin.Installed) {
	t.Helper()
	in := fakebin.Install(t, t.TempDir(), "agent", script, pre)
	if cfg.ID == "" {
		cfg.ID = "auth"
	}
	b, err := h.StartProfile(ctxT(t), &Profile{Name: "plain", Binaries: []string{"agent"}}, LaunchOptions{Binary: in.Path}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return b, in
}

func TestSignInOnSessionNew(t *testing.T) {
	tests := []struct {
		name        string
		initMethods string
		authError   *acptest.Error
		wantMethods []AuthOption
	}{
		{
			name:        "methods from initialize",
			initMethods: `[{"id":"oauth","name":"Sign in with the browser","description":"opens a browser"},{"id":"weird","name":"?","type":"quantum"}]`,
			wantMethods: []AuthOption{{ID: "oauth", Name: "Sign in with the browser", Description: "opens a browser", Type: AuthTypeAgent}},
		},
		{
			name:        "methods only in error.data.authMethods",
			initMethods: `[]`,
			authError:   &acptest.Error{Code: -32000, Message: "Authentication required", Data: raw(`{"authMethods":[{"id":"oauth","name":"Log in","type":"agent"}]}`)},
			wantMethods: []AuthOption{{ID: "oauth", Name: "Log in", Type: AuthTypeAgent}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, rec := newHostAndRecorder(t, nil)
			answerAuth(rec, func(r *AuthRequest) { r.Answer(AuthAnswer{MethodID: "oauth"}) })
			script := acptest.Script{
				Initialize: acptest.InitializeScript{AuthMethods: raw(tt.initMethods)},
				NewSession: acptest.NewSessionScript{RequireAuth: "oauth", AuthError: tt.authError},
			}
			b, in := startPlain(t, h, script, "", Config{})
			s, err := b.OpenSession(ctxT(t), SessionConfig{Cwd: "/w"})
			if err != nil {
				t.Fatal(err)
			}
			ev := rec.waitFor("auth required", func(ev Event) bool { return ev.Kind == KindAuthRequired })
			if ev.Auth.Call != "session/new" || !reflect.DeepEqual(ev.Auth.Methods, tt.wantMethods) {
				t.Errorf("auth request %+v", ev.Auth)
			}
			want := []string{"initialize", "session/new", "authenticate", "session/new"}
			if got := fakebin.MethodsOf(in.Received(t)); !reflect.DeepEqual(got, want) {
				t.Errorf("methods %q, want %q", got, want)
			}
			if s.ID() == "" {
				t.Error("no session")
			}
		})
	}
}

func TestSignInDeclinedOrImpossible(t *testing.T) {
	t.Run("declined", func(t *testing.T) {
		h, rec := newHostAndRecorder(t, nil)
		answerAuth(rec, func(r *AuthRequest) { r.Decline() })
		script := acptest.Script{Initialize: acptest.InitializeScript{AuthMethods: raw(`[{"id":"oauth","name":"Log in"}]`)},
			NewSession: acptest.NewSessionScript{RequireAuth: "oauth"}}
		b, _ := startPlain(t, h, script, "", Config{})
		_, err := b.OpenSession(ctxT(t), SessionConfig{Cwd: "/w"})
		if !errors.Is(err, ErrAuthRequired) || !errors.Is(err, ErrAuthDeclined) || !strings.Contains(err.Error(), "session/new") {
			t.Fatalf("error %v", err)
		}
	})
	t.Run("prompt fails and no method is usable", func(t *testing.T) {
		// claude-agent-acp without credentials: authMethods [] and the
		// prompt fails -32000.
		h, rec := newHostAndRecorder(t, nil)
		script := acptest.Script{Prompts: []acptest.Turn{{Error: &acptest.Error{Code: -32000, Message: "Authentication required"}}}}
		b, _ := startPlain(t, h, script, "", Config{})
		s, err := b.OpenSession(ctxT(t), SessionConfig{Cwd: "/w"})
		if err != nil {
			t.Fatal(err)
		}
		_, err = s.Prompt(ctxT(t), acpclient.TextBlock("hi"))
		if !errors.Is(err, ErrAuthRequired) {
			t.Fatalf("Prompt error %v", err)
		}
		ev := rec.waitFor("auth required", func(ev Event) bool { return ev.Kind == KindAuthRequired })
		if ev.Auth.Call != "session/prompt" || len(ev.Auth.Methods) != 0 || ev.Session != s.ID() || ev.Auth.Message != "Authentication required" {
			t.Errorf("auth event %+v", ev)
		}
		rec.waitFor("turn end", func(ev Event) bool { return ev.Kind == KindTurnEnd })
	})
}

// TestSignInWithEnvVarRestartsWithTheSecret covers a codex-acp-like agent:
// env_var methods, session/new failing until authenticate succeeds with the
// variable set. The agent only works when restarted with the variable; a
// wrong key is echoed by the agent, and the secret still never shows up.
func TestSignInWithEnvVarRestartsWithTheSecret(t *testing.T) {
	const good, bad = "sk-test-GOODsecret-4242", "sk-test-BADsecret-1717"
	methods := raw(`[{"type":"env_var","id":"openai-api-key","name":"OpenAI API key","vars":[{"name":"OPENAI_API_KEY","label":"API key","secret":true}],"link":"https://example.com/keys"},{"id":"chatgpt","name":"ChatGPT login"}]`)
	base := acptest.Script{
		Initialize: acptest.InitializeScript{AuthMethods: methods},
		NewSession: acptest.NewSessionScript{RequireAuth: "openai-api-key"},
	}
	noKey := base
	noKey.Methods = map[string]acptest.Reply{"authenticate": {Error: &acptest.Error{Code: -32000, Message: "OPENAI_API_KEY is not set"}}}
	wrongKey := base
	wrongKey.Methods = map[string]acptest.Reply{"authenticate": {Error: &acptest.Error{Code: -32000, Message: "invalid api key " + bad}}}
	wrongKey.OnStart = []acptest.Step{{Stderr: "starting with key " + bad}}
	rightKey := base
	rightKey.OnStart = []acptest.Step{{Stderr: "starting with key " + good}}

	bin := acptest.BuildBinary(t)
	pre := fmt.Sprintf("case \"$OPENAI_API_KEY\" in\n%s) exec %q -script %q -record \"$RECORD\";;\n%s) exec %q -script %q -record \"$RECORD\";;\nesac",
		good, bin, acptest.WriteScript(t, rightKey), bad, bin, acptest.WriteScript(t, wrongKey))

	var logs bytes.Buffer
	var logMu sync.Mutex
	logger := slog.New(slog.NewTextHandler(lockedWriter{&logs, &logMu}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	h, rec := newHostAndRecorder(t, nil)
	var attempts []string
	var attemptsMu sync.Mutex
	answerAuth(rec, func(r *AuthRequest) {
		attemptsMu.Lock()
		n := len(attempts)
		attempts = append(attempts, r.Call)
		attemptsMu.Unlock()
		key := good
		if n == 0 {
			key = bad
		}
		r.Answer(AuthAnswer{MethodID: "openai-api-key", Env: map[string]string{"OPENAI_API_KEY": key}})
	})
	b, in := startPlain(t, h, noKey, pre, Config{Logger: logger})

	// First answer: the wrong key. The agent echoes it; we must not.
	_, err := b.OpenSession(ctxT(t), SessionConfig{Cwd: "/w"})
	if err == nil {
		t.Fatal("OpenSession succeeded with the wrong key")
	}
	if strings.Contains(err.Error(), bad) {
		t.Fatalf("the secret leaked into the error: %v", err)
	}
	if !strings.Contains(err.Error(), "openai-api-key") {
		t.Errorf("the error does not name the method: %v", err)
	}

	// Second try: the right key.
	s, err := b.OpenSession(ctxT(t), SessionConfig{Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	if s.ID() == "" {
		t.Fatal("no session")
	}
	if got := fakebin.MethodsOf(in.Received(t)); !reflect.DeepEqual(got, []string{"initialize", "authenticate", "session/new"}) {
		t.Errorf("the restarted agent got %q", got)
	}
	ev := rec.waitFor("auth event", func(ev Event) bool { return ev.Kind == KindAuthRequired })
	if m := ev.Auth.Methods[0]; m.Type != AuthTypeEnvVar || len(m.Vars) != 1 || m.Vars[0].Name != "OPENAI_API_KEY" || !m.Vars[0].Secret || m.Link == "" {
		t.Errorf("env_var method %+v", m)
	}
	if len(in.Launches(t)) != 3 {
		t.Errorf("launches %q: want the original and one restart per answer", in.Launches(t))
	}
	for _, ev := range rec.snapshot() {
		data, _ := json.Marshal(ev)
		if bytes.Contains(data, []byte(good)) || bytes.Contains(data, []byte(bad)) {
			t.Fatalf("a secret leaked into an event: %s", data)
		}
	}
	logMu.Lock()
	defer logMu.Unlock()
	if strings.Contains(logs.String(), good) || strings.Contains(logs.String(), bad) {
		t.Fatalf("a secret leaked into the log:\n%s", logs.String())
	}
}

// TestSignInRefusesUndeclaredVariables: an answer that sets a variable its
// env_var method does not list (an app forwarding what a page sent: PATH,
// LD_PRELOAD, BASH_ENV) is refused with ErrAuthDeclined naming it, and
// the agent is not restarted with it.
func TestSignInRefusesUndeclaredVariables(t *testing.T) {
	methods := raw(`[{"type":"env_var","id":"key","name":"API key","vars":[{"name":"OPENAI_API_KEY"}]}]`)
	script := acptest.Script{
		Initialize: acptest.InitializeScript{AuthMethods: methods},
		NewSession: acptest.NewSessionScript{RequireAuth: "key"},
	}
	h, rec := newHostAndRecorder(t, nil)
	answerAuth(rec, func(r *AuthRequest) {
		r.Answer(AuthAnswer{MethodID: "key", Env: map[string]string{"OPENAI_API_KEY": "k", "BASH_ENV": "/tmp/x", "LD_PRELOAD": "/tmp/y.so"}})
	})
	b, in := startPlain(t, h, script, "", Config{})
	_, err := b.OpenSession(ctxT(t), SessionConfig{Cwd: "/w"})
	if !errors.Is(err, ErrAuthUndeclaredEnv) || !strings.Contains(err.Error(), "BASH_ENV, LD_PRELOAD") {
		t.Fatalf("OpenSession: %v; want ErrAuthUndeclaredEnv naming BASH_ENV, LD_PRELOAD", err)
	}
	if n := len(in.Launches(t)); n != 1 {
		t.Errorf("%d launches: the agent was restarted with an undeclared variable", n)
	}
}

type lockedWriter struct {
	buf *bytes.Buffer
	mu  *sync.Mutex
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(p)
}

// TestSignInRetriesAFailedPrompt covers agents that accept session/new and
// fail only the prompt: the bridge signs in (here restarting the agent with
// a key), resumes the session on the new process and sends the prompt again.
func TestSignInRetriesAFailedPrompt(t *testing.T) {
	methods := raw(`[{"type":"env_var","id":"key","name":"API key","vars":[{"name":"ANTHROPIC_API_KEY"}]}]`)
	before := acptest.Script{Initialize: acptest.InitializeScript{AuthMethods: methods},
		NewSession: acptest.NewSessionScript{SessionIDs: []string{"s1"}},
		Prompts:    []acptest.Turn{{Error: &acptest.Error{Code: -32000, Message: "Authentication required"}}}}
	after := acptest.Script{Initialize: acptest.InitializeScript{AuthMethods: methods},
		LoadSession: acptest.LoadSessionScript{Sessions: []string{"s1"}},
		Prompts:     []acptest.Turn{{Steps: []acptest.Step{{Text: "Hello"}}}}}
	bin := acptest.BuildBinary(t)
	pre := fmt.Sprintf("[ -n \"$ANTHROPIC_API_KEY\" ] && exec %q -script %q -record \"$RECORD\"", bin, acptest.WriteScript(t, after))
	h, rec := newHostAndRecorder(t, nil)
	answerAuth(rec, func(r *AuthRequest) {
		r.Answer(AuthAnswer{MethodID: "key", Env: map[string]string{"ANTHROPIC_API_KEY": "sk-ant-test-0000"}})
	})
	b, in := startPlain(t, h, before, pre, Config{})
	s, err := b.OpenSession(ctxT(t), SessionConfig{Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	stop, err := s.Prompt(ctxT(t), acpclient.TextBlock("hi"))
	if err != nil || stop != acpclient.StopEndTurn {
		t.Fatalf("Prompt = %q, %v", stop, err)
	}
	rec.waitFor("turn end", func(ev Event) bool { return ev.Kind == KindTurnEnd })
	got := kinds(rec.of("auth", "s1"), KindSession, KindAuthority, KindExited)
	want := []string{"turn_start:hi", "auth_required", "decision", "text:Hello", "turn_end:end_turn"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("events %q, want %q", got, want)
	}
	if got := fakebin.MethodsOf(in.Received(t)); !reflect.DeepEqual(got, []string{"initialize", "authenticate", "session/load", "session/prompt"}) {
		t.Errorf("the restarted agent got %q", got)
	}
	if s.ID() != "s1" {
		t.Errorf("session id %s", s.ID())
	}
}

// terminalLoginSetup prepares a terminal sign-in: a host that answers the
// auth request with the first method, an agent script offering methods
// that needs a sign-in, the shell prelude that starts a signed-in agent once
// the login ran, and a login hook that records what it was asked to run.
func terminalLoginSetup(t *testing.T, methods string) (*Host, acptest.Script, string, func(context.Context, TerminalLogin) error, *[]TerminalLogin) {
	marker := filepath.Join(t.TempDir(), "logged-in")
	bin := acptest.BuildBinary(t)
	pre := fmt.Sprintf("[ -f %q ] && exec %q -script %q", marker, bin, acptest.WriteScript(t, acptest.Script{}))
	script := acptest.Script{Initialize: acptest.InitializeScript{AuthMethods: raw(methods)},
		NewSession: acptest.NewSessionScript{RequireAuth: "nobody-can-authenticate-this"}}
	h, rec := newHostAndRecorder(t, nil)
	answerAuth(rec, func(r *AuthRequest) { r.Answer(AuthAnswer{MethodID: r.Methods[0].ID}) })
	ran := &[]TerminalLogin{}
	login := func(ctx context.Context, cmd TerminalLogin) error {
		*ran = append(*ran, cmd)
		return os.WriteFile(marker, nil, 0o644)
	}
	return h, script, pre, login, ran
}

func TestSignInWithTerminalLogin(t *testing.T) {
	tests := []struct {
		name     string
		methods  string
		wantCmd  func(agentPath string) (string, []string)
		wantEnvX bool
	}{
		{
			name:    "terminal-auth in _meta",
			methods: `[{"id":"claude-login","name":"Log in with Claude","_meta":{"terminal-auth":{"command":"/usr/bin/claude-login","args":["--cli"],"label":"Claude login"}}}]`,
			wantCmd: func(string) (string, []string) { return "/usr/bin/claude-login", []string{"--cli"} },
		},
		{
			name:     "terminal method reruns the agent with its args",
			methods:  `[{"type":"terminal","id":"tui-login","name":"Log in","args":["--login"],"env":{"LOGIN_MODE":"tui"}}]`,
			wantCmd:  func(agent string) (string, []string) { return agent, []string{"--login"} },
			wantEnvX: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, script, pre, login, logins := terminalLoginSetup(t, tt.methods)
			b, in := startPlain(t, h, script, pre, Config{TerminalLogin: login})
			if _, err := b.OpenSession(ctxT(t), SessionConfig{Cwd: "/w"}); err != nil {
				t.Fatal(err)
			}
			ran := *logins
			if len(ran) != 1 {
				t.Fatalf("login ran %d times", len(ran))
			}
			cmd, args := tt.wantCmd(in.Path)
			if ran[0].Command != cmd || !reflect.DeepEqual(ran[0].Args, args) {
				t.Errorf("login command %q %q, want %q %q", ran[0].Command, ran[0].Args, cmd, args)
			}
			if tt.wantEnvX != slices.Contains(ran[0].Env, "LOGIN_MODE=tui") {
				t.Errorf("login env has LOGIN_MODE: %v", !tt.wantEnvX)
			}
			init := fakebin.ParamsOf(t, in.Received(t), "initialize")
			caps := init["clientCapabilities"].(map[string]any)
			if caps["auth"].(map[string]any)["terminal"] != true || caps["_meta"].(map[string]any)["terminal-auth"] != true {
				t.Errorf("initialize did not offer terminal login: %v", caps)
			}
		})
	}
	t.Run("not offered without a hook", func(t *testing.T) {
		h, rec := newHostAndRecorder(t, nil)
		script := acptest.Script{Initialize: acptest.InitializeScript{AuthMethods: raw(tests[0].methods)},
			NewSession: acptest.NewSessionScript{RequireAuth: "x"}}
		b, _ := startPlain(t, h, script, "", Config{})
		if _, err := b.OpenSession(ctxT(t), SessionConfig{Cwd: "/w"}); !errors.Is(err, ErrAuthRequired) {
			t.Fatalf("error %v", err)
		}
		ev := rec.waitFor("auth", func(ev Event) bool { return ev.Kind == KindAuthRequired })
		if len(ev.Auth.Methods) != 0 {
			t.Fatalf("terminal method offered without a way to run it: %+v", ev.Auth.Methods)
		}
	})
}

// ownTransport is an app's own transport around a command: not a type the
// bridge knows, only acpclient's interfaces.
type ownTransport struct{ inner *acpclient.CommandTransport }

func (t *ownTransport) Connect(ctx context.Context) (io.ReadWriteCloser, error) {
	return t.inner.Connect(ctx)
}

func (t *ownTransport) Program() (string, []string, []string) { return t.inner.Program() }

// TestTerminalLoginThroughAnAppsTransport: a terminal sign-in method reruns
// the program of any transport that says which it starts
// (acpclient.ProgramTransport), in that transport's environment.
func TestTerminalLoginThroughAnAppsTransport(t *testing.T) {
	h, script, pre, login, logins := terminalLoginSetup(t, `[{"type":"terminal","id":"tui-login","name":"Log in","args":["--login"]}]`)
	in := fakebin.Install(t, t.TempDir(), "agent", script, pre)
	tr := &ownTransport{&acpclient.CommandTransport{Path: in.Path, Args: []string{"--acp"}, Env: append(os.Environ(), "OWN_TRANSPORT=1"),
		StopTimeout: 200 * time.Millisecond, KillTimeout: 200 * time.Millisecond}}
	b, err := h.Start(ctxT(t), Config{ID: "own", Transport: tr, TerminalLogin: login})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.OpenSession(ctxT(t), SessionConfig{Cwd: "/w"}); err != nil {
		t.Fatal(err)
	}
	ran := *logins
	if len(ran) != 1 {
		t.Fatalf("login ran %d times", len(ran))
	}
	if ran[0].Command != in.Path || !reflect.DeepEqual(ran[0].Args, []string{"--acp", "--login"}) || !slices.Contains(ran[0].Env, "OWN_TRANSPORT=1") {
		t.Errorf("login %q %q (env has OWN_TRANSPORT: %v), want %q [--acp --login] in the transport's environment",
			ran[0].Command, ran[0].Args, slices.Contains(ran[0].Env, "OWN_TRANSPORT=1"), in.Path)
	}
}
