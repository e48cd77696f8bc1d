// Package structure holds the checks that keep the library small enough to
// learn: a budget of exported names per package, a cap on file length, the
// fast decoder kept under internal/, and a bridge whose documentation names
// no vendor. Run it with -v to print the counts.
package structure

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// root is the module's root, two levels up from this package.
const root = "../.."

// budgets caps each public package's exported names: its top-level
// constants, variables, types and functions, and the methods of its
// exported types. A new name must be worth raising the cap for.
var budgets = map[string]int{
	"acpclient":       317,
	"bridge":          296, // Host.Add: an agent started by its first session, which records its workspace meanwhile
	"bridge/terminal": 25,
	"checkpoint":      22, // Shell and its Close: one SSH session for a host's checkpoints
	"fsroot":          42,
	"journal":         24,
	"sshconn":         19,
}

// maxFileLines caps a library source file: past it, a file holds more than
// one idea.
const maxFileLines = 600

// parseDir parses the non-test Go files of one package directory.
func parseDir(t *testing.T, dir string) (*token.FileSet, []*ast.File) {
	t.Helper()
	fset := token.NewFileSet()
	names, err := filepath.Glob(filepath.Join(root, dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	if len(files) == 0 {
		t.Fatalf("no Go files in %s", dir)
	}
	return fset, files
}

// exportedNames counts what a package exports.
func exportedNames(files []*ast.File) int {
	n := 0
	for _, f := range files {
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if !d.Name.IsExported() {
					continue
				}
				if d.Recv != nil && !exportedReceiver(d.Recv.List[0].Type) {
					continue
				}
				n++
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						if s.Name.IsExported() {
							n++
						}
					case *ast.ValueSpec:
						for _, id := range s.Names {
							if id.IsExported() {
								n++
							}
						}
					}
				}
			}
		}
	}
	return n
}

func exportedReceiver(t ast.Expr) bool {
	for {
		switch x := t.(type) {
		case *ast.StarExpr:
			t = x.X
		case *ast.IndexExpr:
			t = x.X
		case *ast.IndexListExpr:
			t = x.X
		case *ast.Ident:
			return x.IsExported()
		default:
			return false
		}
	}
}

func TestExportedNameBudget(t *testing.T) {
	for pkg, budget := range budgets {
		_, files := parseDir(t, pkg)
		n := exportedNames(files)
		t.Logf("%-10s %3d exported names (budget %d)", pkg, n, budget)
		if n > budget {
			t.Errorf("%s exports %d names, over its budget of %d", pkg, n, budget)
		}
	}
}

// TestFileLength walks every library package (examples, tests and
// generated data aside).
func TestFileLength(t *testing.T) {
	longest, longestName := 0, ""
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case "examples", "testdata", ".git", ".ci":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		n := strings.Count(string(b), "\n")
		if n > longest {
			longest, longestName = n, path
		}
		if n > maxFileLines {
			t.Errorf("%s has %d lines, over %d", path, n, maxFileLines)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("longest file: %s, %d lines", longestName, longest)
}

// TestBridgeNamesNoVendor: what one agent does is a profile's business
// (bridge/profiles), so the bridge's documentation names no agent.
func TestBridgeNamesNoVendor(t *testing.T) {
	cmd := exec.Command("go", "doc", "-all", "./bridge")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go doc -all ./bridge: %v", err)
	}
	vendor := regexp.MustCompile(`(?i)\b(crewcoder|kiro|codey|opencode|claude|codex|gemini|qwen|copilot)\b`)
	for i, line := range strings.Split(string(out), "\n") {
		if m := vendor.FindString(line); m != "" {
			t.Errorf("go doc ./bridge, line %d, names %q: %s", i+1, m, strings.TrimSpace(line))
		}
	}
}

// TestFastDecoderUnderInternal: the fast decoder of session/update lines
// (scanner, lexer, shapes, arena, box pool) lives in internal/wire/scan
// behind its one entry, Decoder.Decode, and acpclient imports it: no
// acpclient library file declares a type or function of the decoder's.
func TestFastDecoderUnderInternal(t *testing.T) {
	const scanPkg = "internal/wire/scan"
	_, scanFiles := parseDir(t, scanPkg)
	decoder := map[string]bool{}
	for _, f := range scanFiles {
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil {
					decoder[d.Name.Name] = true
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					if s, ok := s.(*ast.TypeSpec); ok {
						decoder[s.Name.Name] = true
					}
				}
			}
		}
	}
	for _, name := range []string{"Decoder", "chunkScan", "chunkShape", "byteArena", "Pool"} {
		if !decoder[name] {
			t.Errorf("%s declares no %s: where did the fast decoder go?", scanPkg, name)
		}
	}
	fset, files := parseDir(t, "acpclient")
	imported := false
	for _, f := range files {
		for _, imp := range f.Imports {
			imported = imported || imp.Path.Value == `"github.com/acphost/acphost/`+scanPkg+`"`
		}
		for _, d := range f.Decls {
			var names []*ast.Ident
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil {
					names = append(names, d.Name)
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					if s, ok := s.(*ast.TypeSpec); ok {
						names = append(names, s.Name)
					}
				}
			}
			for _, n := range names {
				if decoder[n.Name] {
					t.Errorf("%s declares %s, which is the fast decoder's (%s)", fset.Position(n.Pos()), n.Name, scanPkg)
				}
			}
		}
	}
	if !imported {
		t.Errorf("acpclient does not import %s", scanPkg)
	}
}
