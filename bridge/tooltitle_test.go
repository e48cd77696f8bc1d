package bridge

import (
	"strings"
	"testing"
)

func TestIdentifierTitle(t *testing.T) {
	for _, tt := range []struct {
		title, want string
	}{
		{"read_file", "read_file"},
		{"TaskCreate", "TaskCreate"},
		{"_private", "_private"},
		{"mcp__github__list-issues", "mcp__github__list-issues"},
		{"bash2", "bash2"},
		{strings.Repeat("a", 64), strings.Repeat("a", 64)},
		{strings.Repeat("a", 65), ""},
		{"", ""},
		{"Read main.go", ""},
		{"main.go", ""},
		{"read file", ""},
		{" read_file", ""},
		{"2fa", ""},
		{"-flag", ""},
		{"lire_fichié", ""},
		{"a/b", ""},
	} {
		if got := IdentifierTitle(tt.title); got != tt.want {
			t.Errorf("IdentifierTitle(%q) = %q, want %q", tt.title, got, tt.want)
		}
	}
}
