package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acphost/acphost/acptest"
)

// The agent gets a minimal environment: the base set and its profile's
// vendor variables, not the user's unrelated ones (a CLAUDECODE=1 of the
// shell makes claude-agent-acp refuse to start); --env passes or sets
// more, --env-all passes everything. The agent writes the environment it
// got, as the process sees it, before it starts.
func TestAgentEnvironment(t *testing.T) {
	t.Parallel()
	script := acptest.WriteScript(t, acptest.Script{Prompts: []acptest.Turn{{Steps: []acptest.Step{{Text: "ok"}}}}})
	bin := t.TempDir()
	wrapper := fmt.Sprintf("#!/bin/sh\ntr '\\0' '\\n' < /proc/$$/environ > \"$ENV_OUT\" 2>/dev/null || env > \"$ENV_OUT\"\nexec '%s' -script '%s'\n", acptest.BuildBinary(t), script)
	agent := filepath.Join(bin, "claude-agent-acp")
	if err := os.WriteFile(agent, []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	user := []string{"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH"), "ACPRUN_UNRELATED=1", "CLAUDECODE=1",
		"ANTHROPIC_API_KEY=sk-test", "LC_ALL=C.UTF-8"}
	tests := []struct {
		name      string
		args      []string
		have, not []string
	}{
		{"command", []string{"--agent", agent}, []string{"PATH=", "HOME=", "LC_ALL=C.UTF-8"},
			[]string{"ACPRUN_UNRELATED=", "CLAUDECODE=", "ANTHROPIC_API_KEY="}},
		{"profile", []string{"--provider", "claude"}, []string{"PATH=", "HOME=", "ANTHROPIC_API_KEY=sk-test"},
			[]string{"ACPRUN_UNRELATED=", "CLAUDECODE="}},
		{"--env", []string{"--agent", agent, "--env", "ACPRUN_UNRELATED", "--env", "SET_BY_FLAG=v=1", "--env", "ANTHROPIC_*", "--env", "LC_ALL=POSIX"},
			[]string{"ACPRUN_UNRELATED=1", "SET_BY_FLAG=v=1", "ANTHROPIC_API_KEY=sk-test", "LC_ALL=POSIX"}, []string{"CLAUDECODE="}},
		{"--env-all", []string{"--agent", agent, "--env-all"}, []string{"ACPRUN_UNRELATED=1", "CLAUDECODE=1"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out := filepath.Join(t.TempDir(), "env")
			r := runAcprunEnv(t, t.TempDir(), append(user, "ENV_OUT="+out), append(tt.args, "--env", "ENV_OUT", "--cwd", t.TempDir(), "hi")...)
			if r.code != exitOK {
				t.Fatalf("exit status %d; stderr:\n%s", r.code, r.stderr)
			}
			data, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(string(data), "\n")
			for _, want := range tt.have {
				if !hasEntry(lines, want) {
					t.Errorf("the agent's environment lacks %s:\n%s", want, data)
				}
			}
			for _, bad := range tt.not {
				if hasEntry(lines, bad) {
					t.Errorf("the agent's environment has %s:\n%s", bad, data)
				}
			}
		})
	}
}

func hasEntry(lines []string, prefix string) bool {
	for _, l := range lines {
		if strings.HasPrefix(l, prefix) && (strings.HasSuffix(prefix, "=") || l == prefix) {
			return true
		}
	}
	return false
}

// --env refuses what is neither a name, a prefix nor an assignment, and
// --env-all has no meaning for an agent on an SSH host.
func TestEnvFlagUsage(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"--env", "=x"}, {"--env", "A*=1"}, {"--env", "A B"}, {"--env-all", "--ssh", "u@h", "--cwd", "/w"}} {
		r := runAcprun(t, append(args, "hi")...)
		if r.code != exitUsage || !strings.Contains(r.stderr, "env") {
			t.Errorf("%q: exit status %d, stderr %q; want 2 and a reason", args, r.code, r.stderr)
		}
	}
}

// TestWithheldKeyHint checks that a sign-in or start that fails while the
// minimal environment withheld a key of the user's says which, and how to
// pass it (--env NAME), without its value; passed on, it is not mentioned.
func TestWithheldKeyHint(t *testing.T) {
	t.Parallel()
	const value = "AIza-secret-value"
	fakeagent := acptest.BuildBinary(t)
	agent := func(s acptest.Script) string {
		return fmt.Sprintf("'%s' -script '%s'", fakeagent, acptest.WriteScript(t, s))
	}
	exit := 3
	needsAuth := agent(acptest.Script{
		Initialize: acptest.InitializeScript{AuthMethods: json.RawMessage(`[{"id":"gemini-api-key","name":"Use GEMINI_API_KEY"}]`)},
		NewSession: acptest.NewSessionScript{RequireAuth: "gemini-api-key"},
	})
	diesAtStart := agent(acptest.Script{Initialize: acptest.InitializeScript{Steps: []acptest.Step{{Exit: &exit}}}})
	env := []string{"GEMINI_API_KEY=" + value}
	for _, c := range []struct {
		name string
		args []string
		code int
		hint bool
	}{
		{"sign-in", []string{"--agent", needsAuth}, exitAuth, true},
		{"start", []string{"--agent", diesAtStart}, exitHandshake, true},
		{"sign-in, key passed on", []string{"--agent", needsAuth, "--env", "GEMINI_API_KEY"}, exitAuth, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := runAcprunEnv(t, t.TempDir(), env, append(c.args, "--cwd", t.TempDir(), "hello")...)
			if r.code != c.code {
				t.Errorf("exit status %d, want %d; stderr:\n%s", r.code, c.code, r.stderr)
			}
			if strings.Contains(r.stderr+r.stdout, value) {
				t.Errorf("the key's value is shown:\n%s", r.stderr)
			}
			if got := strings.Contains(r.stderr, "--env GEMINI_API_KEY"); got != c.hint {
				t.Errorf("hint shown: %v, want %v; stderr:\n%s", got, c.hint, r.stderr)
			}
		})
	}
}
