package main

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"
)

// A table too wide for its width narrows the shrink columns first (keeping
// their end where asked), then the widest of the others, and marks every
// cut with "…"; one that fits is left alone.
func TestTableFitsItsWidth(t *testing.T) {
	rows := [][]string{
		{"NAME", "NOTE", "PATH"},
		{"a", strings.Repeat("n", 30), "/" + strings.Repeat("p", 40) + "/prog"},
		{"bb", "short", "-"},
	}
	var out bytes.Buffer
	table{rows: rows, width: 40, shrink: []int{2}, shrinkWidest: []int{1}, keepEnd: map[int]bool{2: true}}.write(&out)
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	for _, l := range lines {
		if utf8.RuneCountInString(l) > 40 {
			t.Errorf("line of %d columns: %q", utf8.RuneCountInString(l), l)
		}
	}
	if want := "a     " + strings.Repeat("n", 21) + "…  …pppp/prog"; lines[1] != want {
		t.Errorf("row\n%q\nwant\n%q", lines[1], want)
	}
	if lines[2] != "bb    short                   -" {
		t.Errorf("row %q", lines[2])
	}

	out.Reset()
	table{rows: rows[:1], width: 40, shrink: []int{2}}.write(&out)
	if out.String() != "NAME  NOTE  PATH\n" {
		t.Errorf("a table that fits: %q", out.String())
	}
}
