package acpclient

import (
	"slices"
	"testing"
)

// TestWithheldCredentials checks which variables a minimal environment
// withheld are named: credential-like names the agent's environment
// lacks, never a value, never one it has.
func TestWithheldCredentials(t *testing.T) {
	environ := []string{
		"PATH=/bin", "HOME=/home/u", "GEMINI_API_KEY=sekrit", "GITHUB_TOKEN=ghp_x", "AWS_SECRET_ACCESS_KEY=a",
		"GOOGLE_APPLICATION_CREDENTIALS=/k.json", "ANTHROPIC_API_KEY=b", "SSH_AUTH_SOCK=/s", "KEYMAP=us",
		"MONKEY_BUSINESS=1", "db_password=p", "GEMINI_API_KEY=again",
	}
	env := MinimalEnv(environ, "ANTHROPIC_API_KEY")
	got := WithheldCredentials(environ, env)
	want := []string{"AWS_SECRET_ACCESS_KEY", "GEMINI_API_KEY", "GITHUB_TOKEN", "GOOGLE_APPLICATION_CREDENTIALS", "db_password"}
	if !slices.Equal(got, want) {
		t.Errorf("withheld %q, want %q", got, want)
	}
	if got := WithheldCredentials(environ, environ); len(got) != 0 {
		t.Errorf("the whole environment passed on: withheld %q, want none", got)
	}
}
