package profiles

import (
	"slices"
	"strings"
	"testing"
)

// Every built-in profile names its vendor's variables, and its minimal
// environment keeps them while dropping the rest of the user's: the
// environment a claude-agent-acp gets has the Anthropic key and base URL,
// not another tool's token or the variable that makes Claude Code refuse
// to run inside another session.
func TestProfilesMinimalEnv(t *testing.T) {
	for _, p := range All() {
		if len(p.EnvNames) == 0 {
			t.Errorf("%s: no EnvNames", p.Name)
		}
		for _, n := range p.EnvNames {
			if n == "" || strings.Contains(strings.TrimSuffix(n, "*"), "*") || strings.Contains(n, "=") {
				t.Errorf("%s: EnvNames entry %q is not a name or a prefix ending in *", p.Name, n)
			}
		}
	}
	environ := []string{"PATH=/bin", "HOME=/h", "ANTHROPIC_API_KEY=k", "ANTHROPIC_BASE_URL=http://m", "CLAUDECODE=1",
		"GITHUB_TOKEN=t", "OPENAI_API_KEY=o", "EXTRA=1"}
	tests := []struct {
		profile string
		extra   []string
		want    []string
	}{
		{"claude", nil, []string{"PATH=/bin", "HOME=/h", "ANTHROPIC_API_KEY=k", "ANTHROPIC_BASE_URL=http://m"}},
		{"codex", []string{"EXTRA"}, []string{"PATH=/bin", "HOME=/h", "OPENAI_API_KEY=o", "EXTRA=1"}},
		{"copilot", nil, []string{"PATH=/bin", "HOME=/h", "GITHUB_TOKEN=t"}},
	}
	for _, tt := range tests {
		p, _ := Lookup(tt.profile)
		if got := p.MinimalEnv(environ, tt.extra...); !slices.Equal(got, tt.want) {
			t.Errorf("%s: MinimalEnv = %q, want %q", tt.profile, got, tt.want)
		}
	}
}
