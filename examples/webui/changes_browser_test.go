//go:build browser

package main

import (
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserChanges drives the Changes panel: it shows under a turn with
// the files the turn changed, a file's diff renders line by line, a
// Restore over a file changed since is refused naming it and then forced,
// bringing the files back on disk, and a per-file Revert sets one file
// back.
func TestBrowserChanges(t *testing.T) {
	b := newBrowser(t)
	t.Setenv("HOME", t.TempDir()) // Chromium's, besides its profile directory
	ts := startChangesServer(t)
	tab := b.tab
	b.prefix = "changes-"
	b.run(tab, chromedp.Navigate(ts.URL()))
	watchPolicy(b, tab)
	b.run(tab, click(`[data-new="changer"]`))
	b.until(tab, "the session", `document.querySelector("#s-state")?.textContent === "open"`)

	// The panel, under the turn, lists the files.
	b.prompt(tab, "change")
	rows := `[...document.querySelectorAll('.changes[data-turn="1"] .ch-file')].map(e => e.textContent).join("|")`
	b.until(tab, "the turn's Changes panel", rows+` === "M a.txt +2 −1|D gone.txt +0 −1|A made.txt +1 −0"`)
	b.until(tab, "the panel after the turn's reply", `document.querySelector(".msg.agent_text, .msg.text")?.compareDocumentPosition(document.querySelector(".changes")) & Node.DOCUMENT_POSITION_FOLLOWING`)

	// A file's diff, its lines coloured by what they are.
	b.run(tab, click(`.changes[data-turn="1"] li[data-path="a.txt"] .ch-file`))
	lines := func(cls string) string {
		return `[...document.querySelectorAll('.changes[data-turn="1"] li[data-path="a.txt"] .ch-diff .` + cls + `')].map(e => e.textContent).join("")`
	}
	b.until(tab, "a.txt's diff", lines("d-del")+` === "-old\n" && `+lines("d-add")+` === "+new\n+lines\n" && `+lines("d-hunk")+`.startsWith("@@")`)
	b.shot(tab, "diff")

	// The user changes a.txt after the turn: Restore is refused, naming
	// it, and nothing changes; Restore anyway brings the state back.
	writeFile(t, filepath.Join(ts.cwd, "a.txt"), "mine\n")
	b.run(tab, click(`.changes[data-turn="1"] .ch-restore`))
	b.until(tab, "the conflict", `!document.querySelector('.changes[data-turn="1"] .ch-conflict').hidden && `+
		`[...document.querySelectorAll('.changes[data-turn="1"] .ch-conflicts li')].map(e => e.textContent).join(",") === "a.txt"`)
	b.shot(tab, "conflict")
	if got := fileText(t, filepath.Join(ts.cwd, "a.txt")); got != "mine\n" {
		t.Fatalf("a.txt after a refused restore: %q", got)
	}
	if got := fileText(t, filepath.Join(ts.cwd, "gone.txt")); got != "(none)" {
		t.Fatalf("gone.txt after a refused restore: %q", got)
	}
	b.run(tab, click(`.changes[data-turn="1"] .ch-force`))
	b.until(tab, "the restore's line", count(".line.restored")+` === 1 && document.querySelector(".line.restored").textContent.includes("before turn 1")`)
	for name, want := range map[string]string{"a.txt": "old\n", "gone.txt": "bye\n", "keep.txt": "keep\n", "made.txt": "(none)"} {
		if got := fileText(t, filepath.Join(ts.cwd, name)); got != want {
			t.Errorf("%s after Restore anyway: %q, want %q", name, got, want)
		}
	}
	b.until(tab, "the conflict gone", `document.querySelector('.changes[data-turn="1"] .ch-conflict').hidden`)

	// Revert one file of a second turn: the others stay as the turn left them.
	b.prompt(tab, "change")
	b.until(tab, "the second turn's panel", count(`.changes[data-turn="2"] .ch-file`)+" === 3")
	b.run(tab, click(`.changes[data-turn="2"] li[data-path="made.txt"] .ch-revert`))
	b.until(tab, "the revert's line", count(".line.restored")+` === 2 && [...document.querySelectorAll(".line.restored")].pop().textContent.includes("1 file set back")`)
	if got := fileText(t, filepath.Join(ts.cwd, "made.txt")); got != "(none)" {
		t.Errorf("made.txt after its revert: %q", got)
	}
	if got := fileText(t, filepath.Join(ts.cwd, "a.txt")); got != "new\nlines\n" {
		t.Errorf("a.txt after another file's revert: %q", got)
	}
	b.shot(tab, "reverted")
	noViolations(t, b, tab)
}
