package cmdline

import (
	"slices"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestSplit(t *testing.T) {
	tests := []struct {
		line string
		want []string
	}{
		{"crewcoder acp", []string{"crewcoder", "acp"}},
		{"  gemini   --acp\t", []string{"gemini", "--acp"}},
		{`agent --name 'my agent' --x "a \"b\" c"`, []string{"agent", "--name", "my agent", "--x", `a "b" c`}},
		{`a 'it''s' b`, []string{"a", "its", "b"}},
		{`a "" ''`, []string{"a", "", ""}},
		{`a\ b c`, []string{"a b", "c"}},
		{`"$HOME" '$HOME' ~`, []string{"$HOME", "$HOME", "~"}},
		{`"a\nb"`, []string{`a\nb`}},
		{`/opt/my\ agents/bin/agent --flag=x`, []string{"/opt/my agents/bin/agent", "--flag=x"}},
	}
	for _, tt := range tests {
		got, err := Split(tt.line)
		if err != nil {
			t.Errorf("Split(%q): %v", tt.line, err)
			continue
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("Split(%q) = %q, want %q", tt.line, got, tt.want)
		}
	}
	for _, bad := range []string{`a 'b`, `a "b`, `a\`, ``, `   `} {
		if got, err := Split(bad); err == nil {
			t.Errorf("Split(%q) = %q, want an error", bad, got)
		}
	}
}
