package readme

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// marker names the Example a README Go block quotes; it is the line right
// before the block: <!-- from DIR ExampleName -->, DIR relative to the
// module root.
var marker = regexp.MustCompile(`^<!-- from (\S+) (Example\w*) -->$`)

// block is one Go code block of the README and the Example it names.
type block struct {
	line          int // of the opening fence
	dir, example  string
	code          []string
	markerMissing bool
}

// goBlocks returns the README's Go blocks.
func goBlocks(readme []byte) []block {
	var blocks []block
	lines := strings.Split(string(readme), "\n")
	for i := 0; i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) != "```go" {
			continue
		}
		b := block{line: i + 1, markerMissing: true}
		if i > 0 {
			if m := marker.FindStringSubmatch(strings.TrimSpace(lines[i-1])); m != nil {
				b.dir, b.example, b.markerMissing = m[1], m[2], false
			}
		}
		for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "```"; i++ {
			b.code = append(b.code, lines[i])
		}
		blocks = append(blocks, b)
	}
	return blocks
}

// exampleSource returns the source of the function name in dir's test
// files.
func exampleSource(dir, name string) (string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
	if err != nil {
		return "", err
	}
	fset := token.NewFileSet()
	for _, path := range files {
		src, err := os.ReadFile(path)
		if err != nil {
			return "", err
		}
		f, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
		if err != nil {
			return "", err
		}
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil && fd.Name.Name == name {
				start, end := fset.Position(fd.Pos()).Offset, fset.Position(fd.End()).Offset
				return string(src[start:end]), nil
			}
		}
	}
	return "", fmt.Errorf("no function %s in %s/*_test.go", name, dir)
}

// normalise drops indentation and blank lines.
func normalise(lines []string) []string {
	var out []string
	for _, l := range lines {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// contains reports whether want occurs in have as a run of lines.
func contains(have, want []string) bool {
	if len(want) == 0 {
		return false
	}
	for i := 0; i+len(want) <= len(have); i++ {
		if equal(have[i:i+len(want)], want) {
			return true
		}
	}
	return false
}

func equal(a, b []string) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// check returns what is wrong with the README's Go blocks, read from root.
func check(root string, readme []byte) []string {
	var problems []string
	for _, b := range goBlocks(readme) {
		if b.markerMissing {
			problems = append(problems, fmt.Sprintf("README.md:%d: Go block without a <!-- from DIR ExampleName --> line before it", b.line))
			continue
		}
		src, err := exampleSource(filepath.Join(root, b.dir), b.example)
		if err != nil {
			problems = append(problems, fmt.Sprintf("README.md:%d: %v", b.line, err))
			continue
		}
		if !contains(normalise(strings.Split(src, "\n")), normalise(b.code)) {
			problems = append(problems, fmt.Sprintf("README.md:%d: the block is not in %s %s verbatim (modulo indentation)", b.line, b.dir, b.example))
		}
	}
	return problems
}

// TestREADMEQuotesExamples: every Go block of the README is quoted from
// the Example its marker names, so the README's code compiles and runs as
// the Examples do and cannot drift from them.
func TestREADMEQuotesExamples(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(readme, []byte("```go")); n < 4 {
		t.Fatalf("README has %d Go blocks; the embedding, profile, remote and testing ones are expected", n)
	}
	for _, p := range check("../..", readme) {
		t.Error(p)
	}
}

// TestCheckFindsDrift: the check refuses a block without a marker, one
// naming a missing Example, and one that differs from its Example.
func TestCheckFindsDrift(t *testing.T) {
	root := t.TempDir()
	os.Mkdir(filepath.Join(root, "pkg"), 0o755)
	os.WriteFile(filepath.Join(root, "pkg", "x_test.go"), []byte("package pkg\n\nfunc Example_a() {\n\tx := 1\n\t_ = x\n}\n"), 0o644)
	for _, tt := range []struct {
		readme string
		want   string // "" when fine
	}{
		{"<!-- from pkg Example_a -->\n```go\nx := 1\n  _ = x\n```\n", ""},
		{"```go\nx := 1\n```\n", "without a"},
		{"<!-- from pkg Example_b -->\n```go\nx := 1\n```\n", "no function Example_b"},
		{"<!-- from pkg Example_a -->\n```go\nx := 2\n```\n", "not in pkg Example_a"},
	} {
		problems := check(root, []byte(tt.readme))
		switch {
		case tt.want == "" && len(problems) > 0:
			t.Errorf("%q: %v", tt.readme, problems)
		case tt.want != "" && (len(problems) != 1 || !strings.Contains(problems[0], tt.want)):
			t.Errorf("%q: %v, want one problem saying %q", tt.readme, problems, tt.want)
		}
	}
}
