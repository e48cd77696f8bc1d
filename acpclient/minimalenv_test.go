package acpclient_test

import (
	"slices"
	"testing"

	"github.com/acphost/acphost/acpclient"
)

// MinimalEnv keeps the documented base and the names asked for, in
// environ's order, and nothing else: no tokens, no variable that changes
// how an agent behaves.
func TestMinimalEnv(t *testing.T) {
	environ := []string{
		"PATH=/usr/bin", "GITHUB_TOKEN=secret", "HOME=/home/u", "CLAUDECODE=1", "LC_ALL=C.UTF-8",
		"XDG_CONFIG_HOME=/home/u/.config", "https_proxy=http://proxy:3128", "ANTHROPIC_API_KEY=k",
		"ANTHROPIC_BASE_URL=http://local", "ANTHROPICX=no", "OPENAI_API_KEY=o", "=C:=C:\\", "MY_VAR=1",
	}
	got := acpclient.MinimalEnv(environ, "ANTHROPIC_*", "MY_VAR")
	want := []string{
		"PATH=/usr/bin", "HOME=/home/u", "LC_ALL=C.UTF-8", "XDG_CONFIG_HOME=/home/u/.config",
		"https_proxy=http://proxy:3128", "ANTHROPIC_API_KEY=k", "ANTHROPIC_BASE_URL=http://local", "MY_VAR=1",
	}
	if !slices.Equal(got, want) {
		t.Errorf("MinimalEnv:\n got %q\nwant %q", got, want)
	}
	if got := acpclient.FilterEnv(environ, "HOME"); !slices.Equal(got, []string{"HOME=/home/u"}) {
		t.Errorf("FilterEnv(HOME) = %q", got)
	}
	if got := acpclient.FilterEnv(nil); got == nil || len(got) != 0 {
		t.Errorf("FilterEnv(nil) = %#v, want an empty environment, not nil (nil means all of it to a CommandTransport)", got)
	}
}
