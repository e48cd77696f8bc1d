package structure

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
)

// The floor plan of package bridge: its library files ordered so that a
// file uses only names defined below it, as far as cycles allow.
//
// A file A refers to a file B (A ≠ B) when an identifier in A denotes an
// object of package bridge (a type, function, method, field, constant or
// variable) declared in B; the edge A→B counts once however many of B's
// names A uses. The files are ordered bottom up: the strongly
// connected components of the graph in topological order (what is used
// below its users); inside a component, by the Eades–Lin–Smyth greedy
// heuristic for a small feedback arc set (repeatedly take away files that
// use nothing left, putting them lowest, and files that nothing left uses,
// putting them highest; when neither is left, the file that uses the most
// files left minus the files left that use it goes highest; ties by file
// name, so the order is deterministic); then each file in turn is moved
// to the place in its component where the fewest of its edges point
// against the order, until no move helps. An edge from a file to one above
// it is a back-up reference; backUpBudget caps their number. (The log
// also lists the names each one uses.)
const backUpBudget = 21

// sessionMethodBudget caps the method set of *bridge.Session (exported and
// not, promoted ones included).
const sessionMethodBudget = 75

// floorEdge is one file's use of another's names.
type floorEdge struct {
	from, to string
	names    []string
}

// listedPackage is what go list tells of one package.
type listedPackage struct {
	ImportPath string
	Dir        string
	Export     string
	GoFiles    []string
}

// typeCheckBridge type-checks bridge's library files against its
// dependencies' export data (go list -export: the build cache, no network).
func typeCheckBridge(t *testing.T) (*token.FileSet, []*ast.File, *types.Package, *types.Info) {
	t.Helper()
	const bridgePath = "github.com/acphost/acphost/bridge"
	cmd := exec.Command("go", "list", "-export", "-deps", "-json=ImportPath,Dir,Export,GoFiles", "./bridge")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOPROXY=off")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -export ./bridge: %v", err)
	}
	exports := map[string]string{}
	var bridgePkg listedPackage
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p listedPackage
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("go list output: %v", err)
		}
		exports[p.ImportPath] = p.Export
		if p.ImportPath == bridgePath {
			bridgePkg = p
		}
	}
	if bridgePkg.Dir == "" {
		t.Fatalf("go list did not list %s", bridgePath)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, name := range bridgePkg.GoFiles {
		f, err := parser.ParseFile(fset, filepath.Join(bridgePkg.Dir, name), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	conf := types.Config{Importer: importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		e, ok := exports[path]
		if !ok || e == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(e)
	})}
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}}
	pkg, err := conf.Check(bridgePath, fset, files, info)
	if err != nil {
		t.Fatalf("type-checking bridge: %v", err)
	}
	return fset, files, pkg, info
}

// fileGraph builds the file-level reference graph, each edge with the names it uses.
func fileGraph(fset *token.FileSet, pkg *types.Package, info *types.Info) (nodes []string, edges map[[2]string]*floorEdge) {
	edges = map[[2]string]*floorEdge{}
	seen := map[[2]string]map[types.Object]bool{}
	fileSet := map[string]bool{}
	for id, obj := range info.Uses {
		if obj == nil || obj.Pkg() != pkg || !obj.Pos().IsValid() {
			continue
		}
		from := filepath.Base(fset.Position(id.Pos()).Filename)
		to := filepath.Base(fset.Position(obj.Pos()).Filename)
		fileSet[from], fileSet[to] = true, true
		if from == to {
			continue
		}
		k := [2]string{from, to}
		if seen[k] == nil {
			seen[k] = map[types.Object]bool{}
			edges[k] = &floorEdge{from: from, to: to}
		}
		if !seen[k][obj] {
			seen[k][obj] = true
			name := obj.Name()
			if f, ok := obj.(*types.Func); ok {
				if recv := f.Signature().Recv(); recv != nil {
					name = types.TypeString(recv.Type(), types.RelativeTo(pkg)) + "." + name
				}
			}
			edges[k].names = append(edges[k].names, name)
		}
	}
	for _, e := range edges {
		sort.Strings(e.names)
	}
	for f := range fileSet {
		nodes = append(nodes, f)
	}
	sort.Strings(nodes)
	return nodes, edges
}

// floorOrder orders the files bottom up (see backUpBudget).
func floorOrder(nodes []string, edges map[[2]string]*floorEdge) []string {
	out := map[string][]string{}
	for k := range edges {
		out[k[0]] = append(out[k[0]], k[1])
	}
	for _, v := range out {
		sort.Strings(v)
	}
	// Tarjan's algorithm emits components used-first: a component is
	// complete only after everything it reaches.
	index, low := map[string]int{}, map[string]int{}
	onStack := map[string]bool{}
	var stack []string
	var comps [][]string
	next := 0
	var visit func(v string)
	visit = func(v string) {
		index[v], low[v] = next, next
		next++
		stack = append(stack, v)
		onStack[v] = true
		for _, w := range out[v] {
			if _, ok := index[w]; !ok {
				visit(w)
				low[v] = min(low[v], low[w])
			} else if onStack[w] {
				low[v] = min(low[v], index[w])
			}
		}
		if low[v] == index[v] {
			var c []string
			for {
				w := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				onStack[w] = false
				c = append(c, w)
				if w == v {
					break
				}
			}
			sort.Strings(c)
			comps = append(comps, c)
		}
	}
	for _, v := range nodes {
		if _, ok := index[v]; !ok {
			visit(v)
		}
	}
	var order []string
	for _, c := range comps {
		order = append(order, sift(elsOrder(c, edges), edges)...)
	}
	return order
}

// elsOrder orders one component bottom up by Eades–Lin–Smyth.
func elsOrder(comp []string, edges map[[2]string]*floorEdge) []string {
	left := map[string]bool{}
	for _, v := range comp {
		left[v] = true
	}
	weight := func(from, to string) int {
		if edges[[2]string{from, to}] != nil {
			return 1
		}
		return 0
	}
	degrees := func(v string) (in, out int) {
		for w := range left {
			if w != v {
				out += weight(v, w)
				in += weight(w, v)
			}
		}
		return in, out
	}
	var bottom, top []string // bottom grows upwards, top downwards
	for len(left) > 0 {
		names := make([]string, 0, len(left))
		for v := range left {
			names = append(names, v)
		}
		sort.Strings(names)
		moved := false
		for _, v := range names {
			if in, out := degrees(v); out == 0 {
				bottom = append(bottom, v)
				delete(left, v)
				moved = true
			} else if in == 0 {
				top = append(top, v)
				delete(left, v)
				moved = true
			}
		}
		if moved {
			continue
		}
		best, bestDelta := "", 0
		for _, v := range names {
			in, out := degrees(v)
			if d := out - in; best == "" || d > bestDelta {
				best, bestDelta = v, d
			}
		}
		top = append(top, best)
		delete(left, best)
	}
	slices.Reverse(top)
	return append(bottom, top...)
}

// TestBridgeFloorPlan counts bridge's back-up references and Session's
// methods against their budgets; -v prints the worst offenders.
func TestBridgeFloorPlan(t *testing.T) {
	fset, _, pkg, info := typeCheckBridge(t)
	nodes, edges := fileGraph(fset, pkg, info)
	order := floorOrder(nodes, edges)
	floor := map[string]int{}
	for i, f := range order {
		floor[f] = i
	}
	var back []*floorEdge
	total := 0
	for _, e := range edges {
		if floor[e.to] > floor[e.from] {
			back = append(back, e)
			total++
		}
	}
	sort.Slice(back, func(i, j int) bool {
		if len(back[i].names) != len(back[j].names) {
			return len(back[i].names) > len(back[j].names)
		}
		return back[i].from+back[i].to < back[j].from+back[j].to
	})
	t.Logf("bridge: %d files, %d file pairs referring, %d back-up references (budget %d)", len(nodes), len(edges), total, backUpBudget)
	t.Logf("floors, bottom up: %s", strings.Join(order, " "))
	for i, e := range back {
		if i == 25 {
			t.Logf("  ... %d more pairs", len(back)-i)
			break
		}
		t.Logf("  %s (floor %d) → %s (floor %d): %d: %s", e.from, floor[e.from], e.to, floor[e.to], len(e.names), strings.Join(e.names, ", "))
	}
	if total > backUpBudget {
		t.Errorf("bridge has %d back-up references between its files, over the budget of %d: move the used code down, or pass a func", total, backUpBudget)
	}

	obj := pkg.Scope().Lookup("Session")
	if obj == nil {
		t.Fatal("bridge declares no Session")
	}
	ms := types.NewMethodSet(types.NewPointer(obj.Type()))
	exported := 0
	for i := range ms.Len() {
		if ms.At(i).Obj().Exported() {
			exported++
		}
	}
	t.Logf("*Session: %d methods (%d exported; budget %d)", ms.Len(), exported, sessionMethodBudget)
	if ms.Len() > sessionMethodBudget {
		t.Errorf("*bridge.Session has %d methods, over the budget of %d: give a concern its own type", ms.Len(), sessionMethodBudget)
	}
}

// sift improves a component's order bottom up: each file in turn moves to
// the place where the fewest of its own edges point up (the first such
// place), until a whole pass moves nothing.
func sift(order []string, edges map[[2]string]*floorEdge) []string {
	has := func(from, to string) bool { return edges[[2]string{from, to}] != nil }
	// cost is how many of v's edges point up with v placed before rest[p].
	cost := func(v string, rest []string, p int) int {
		c := 0
		for j, w := range rest {
			if j >= p && has(v, w) || j < p && has(w, v) {
				c++
			}
		}
		return c
	}
	for moved := true; moved; {
		moved = false
		for _, v := range slices.Clone(order) {
			i := slices.Index(order, v)
			rest := slices.Delete(slices.Clone(order), i, i+1)
			best, bestCost := i, cost(v, rest, i)
			for p := range len(rest) + 1 {
				if c := cost(v, rest, p); c < bestCost {
					best, bestCost = p, c
				}
			}
			if best != i {
				order = slices.Insert(rest, best, v)
				moved = true
			}
		}
	}
	return order
}

// TestBridgeDocMap checks the package doc's concept-to-file table ("Where
// things are" in bridge/doc.go): it names every library file of package
// bridge, and only files that exist.
func TestBridgeDocMap(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(root, "bridge", "doc.go"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(src), "// # Where things are\n")
	if !ok {
		t.Fatal(`bridge/doc.go has no "# Where things are" section`)
	}
	if end := strings.Index(section, "\n// # "); end >= 0 {
		section = section[:end]
	}
	named := map[string]bool{}
	for _, m := range regexp.MustCompile(`[a-z_0-9]+\.go\b`).FindAllString(section, -1) {
		named[m] = true
	}
	files, err := filepath.Glob(filepath.Join(root, "bridge", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	exists := map[string]bool{}
	for _, f := range files {
		name := filepath.Base(f)
		if strings.HasSuffix(name, "_test.go") || name == "doc.go" {
			continue
		}
		exists[name] = true
		if !named[name] {
			t.Errorf("bridge/doc.go's table of where things are does not name %s", name)
		}
	}
	for name := range named {
		if !exists[name] {
			t.Errorf("bridge/doc.go's table of where things are names %s, which is no library file of bridge", name)
		}
	}
}
