package bridge

import (
	"errors"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/acphost/acphost/acpclient"
	"github.com/acphost/acphost/acptest"
	"github.com/acphost/acphost/internal/fakebin"
)

// TestWithheldCredentialsNamed checks that a failed sign-in or start names
// the app's variables that look like credentials and that the agent's
// (minimal) environment left out, and never their values; an agent given
// the app's whole environment has nothing withheld.
func TestWithheldCredentialsNamed(t *testing.T) {
	const secret = "AIza-not-for-the-error"
	t.Setenv("GEMINI_API_KEY", secret)
	t.Setenv("ACPHOST_TEST_UNRELATED", "x")
	minimal := func() []string { return []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()} }
	exit := 3
	needsAuth := acptest.Script{
		Initialize: acptest.InitializeScript{AuthMethods: raw(`[{"id":"gemini-api-key","name":"Use GEMINI_API_KEY","type":"agent"}]`)},
		NewSession: acptest.NewSessionScript{RequireAuth: "*"},
	}
	diesAtStart := acptest.Script{Initialize: acptest.InitializeScript{Steps: []acptest.Step{{Stderr: "no key"}, {Exit: &exit}}}}
	for _, c := range []struct {
		name   string
		script acptest.Script
		env    []string
		want   []string
	}{
		{"sign-in declined, minimal environment", needsAuth, minimal(), []string{"GEMINI_API_KEY"}},
		{"sign-in declined, whole environment", needsAuth, nil, nil},
		{"died at start, minimal environment", diesAtStart, minimal(), []string{"GEMINI_API_KEY"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			h, rec := newHostAndRecorder(t, nil)
			var asked *AuthRequest
			answerAuth(rec, func(r *AuthRequest) { asked = r; r.Decline() })
			in := fakebin.Install(t, t.TempDir(), "agent", c.script, "")
			b, err := h.StartProfile(ctxT(t), &Profile{Name: "plain", Binaries: []string{"agent"}}, LaunchOptions{Binary: in.Path, Env: c.env}, Config{ID: "w"})
			if err == nil {
				_, err = b.OpenSession(ctxT(t), SessionConfig{Cwd: "/w"})
			}
			if err == nil {
				t.Fatal("no error")
			}
			if strings.Contains(err.Error(), secret) {
				t.Errorf("the error shows the value: %v", err)
			}
			we, ok := errors.AsType[*WithheldEnvError](err)
			switch {
			case c.want == nil && ok:
				t.Errorf("nothing was withheld, but the error says %v", we.Names)
			case c.want != nil && (!ok || !reflect.DeepEqual(we.Names, c.want)):
				t.Errorf("error %v: withheld %v, want %v", err, we, c.want)
			case c.want != nil && !strings.Contains(err.Error(), "GEMINI_API_KEY"):
				t.Errorf("the error does not name the variable: %v", err)
			}
			if c.script.NewSession.RequireAuth != "" {
				if !errors.Is(err, ErrAuthRequired) {
					t.Errorf("error %v is not ErrAuthRequired", err)
				}
				if asked == nil || !reflect.DeepEqual(asked.Withheld, c.want) {
					t.Errorf("the auth request's Withheld: %+v, want %v", asked, c.want)
				}
			}
		})
	}
}

// TestWithheldCredentials checks which variables a minimal environment
// withheld are named: credential-like names the agent's environment
// lacks, never a value, never one it has.
func TestWithheldCredentials(t *testing.T) {
	environ := []string{
		"PATH=/bin", "HOME=/home/u", "GEMINI_API_KEY=sekrit", "GITHUB_TOKEN=ghp_x", "AWS_SECRET_ACCESS_KEY=a",
		"GOOGLE_APPLICATION_CREDENTIALS=/k.json", "ANTHROPIC_API_KEY=b", "SSH_AUTH_SOCK=/s", "KEYMAP=us",
		"MONKEY_BUSINESS=1", "db_password=p", "GEMINI_API_KEY=again",
	}
	env := acpclient.MinimalEnv(environ, "ANTHROPIC_API_KEY")
	got := withheldCredentials(environ, env)
	want := []string{"AWS_SECRET_ACCESS_KEY", "GEMINI_API_KEY", "GITHUB_TOKEN", "GOOGLE_APPLICATION_CREDENTIALS", "db_password"}
	if !slices.Equal(got, want) {
		t.Errorf("withheld %q, want %q", got, want)
	}
	if got := withheldCredentials(environ, environ); len(got) != 0 {
		t.Errorf("the whole environment passed on: withheld %q, want none", got)
	}
}
