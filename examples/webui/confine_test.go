package main

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReopenStaysInTheWorkspace checks that a journaled session whose
// directory is outside the server's --cwd is listed as such and not
// reopened, while one in a directory inside it is.
func TestReopenStaysInTheWorkspace(t *testing.T) {
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "journal.db")
	inner, other := filepath.Join(dir, "ws", "sub"), filepath.Join(dir, "elsewhere")
	for _, d := range []string{inner, other} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	keys := map[string]string{}
	for _, cwd := range []string{inner, other} {
		ts := startServerIn(t, cwd, dbPath)
		keys[cwd] = ts.newSession(t, "demo")
		if err := ts.stop(); err != nil {
			t.Fatal(err)
		}
	}

	ts := startServerIn(t, filepath.Join(dir, "ws"), dbPath)
	var list struct{ Sessions []sessionItem }
	ts.call(t, "GET", "/api/sessions", nil, http.StatusOK, &list)
	outside := map[string]bool{}
	for _, it := range list.Sessions {
		outside[it.Key] = it.Outside
	}
	if len(outside) != 2 || outside[keys[inner]] || !outside[keys[other]] {
		t.Fatalf("listed as outside: %v, want only %s", outside, keys[other])
	}
	var refusal apiError
	ts.call(t, "POST", "/api/sessions/"+keys[other]+"/open", struct{}{}, http.StatusForbidden, &refusal)
	if !strings.Contains(refusal.Error, "outside this server's workspace") || !strings.Contains(refusal.Error, other) {
		t.Errorf("the refusal says %q", refusal.Error)
	}
	if _, err := ts.openSession(keys[other]); err == nil {
		t.Error("the session outside the workspace is open")
	}
	ts.call(t, "POST", "/api/sessions/"+keys[inner]+"/open", struct{}{}, http.StatusOK, nil)
}

// TestWorkspaceContains checks the path test itself: prefixes that are not
// directories, dot-dot, and symbolic links that lead out.
func TestWorkspaceContains(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "ws")
	if err := os.MkdirAll(filepath.Join(root, "a"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(dir, filepath.Join(root, "out")); err != nil {
		t.Fatal(err)
	}
	w := &workspace{cwd: root}
	for d, want := range map[string]bool{
		root:                             true,
		filepath.Join(root, "a"):         true,
		filepath.Join(root, "new"):       true,
		root + "2":                       false,
		filepath.Join(root, "..", "x"):   false,
		filepath.Join(root, "out"):       false,
		filepath.Join(root, "out", "ws"): true, // the link leads back in
		"/":                              false,
	} {
		if got := w.contains(d); got != want {
			t.Errorf("contains(%s) = %v, want %v", d, got, want)
		}
	}
}
