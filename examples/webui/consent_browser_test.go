//go:build browser

package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserConsent: the page shows the session's authority beside the
// host mode and, for an agent that needs consent, asks in the page; the
// user's yes reaches the server and the prompt then runs.
func TestBrowserConsent(t *testing.T) {
	b := newBrowser(t)
	t.Setenv("HOME", t.TempDir()) // Chromium's, besides its profile directory
	dir := t.TempDir()
	cwd := filepath.Join(dir, "ws")
	if err := os.Mkdir(cwd, 0o755); err != nil {
		t.Fatal(err)
	}
	ts := startServerWith(t, cwd, filepath.Join(dir, "journal.db"), false, fakeOpenCode(t))
	tab := b.tab
	b.prefix = "consent-"
	b.run(tab, chromedp.Navigate(ts.URL()))
	b.run(tab, click(`[data-new="opencode"]`))
	b.until(tab, "the consent question beside the mode", `document.querySelector("#s-safety")?.dataset.consent === "needed" && document.querySelector("#s-safety")?.dataset.state === "agent-autonomous" && document.querySelector("#s-consent") !== null && document.querySelector("#s-mode")?.value === "build"`)
	b.shot(tab, "asked")
	b.js(tab, `(() => { window.confirm = () => true; document.querySelector("#s-consent").click(); })()`)
	b.until(tab, "the consent granted", `document.querySelector("#s-safety")?.dataset.consent === "" && document.querySelector("#s-safety")?.dataset.state === "agent-autonomous" && document.querySelector("#s-consent") === null`)
	b.prompt(tab, "go")
	b.until(tab, "the agent's reply", `document.querySelector("#transcript")?.textContent.includes("done on my own")`)
	b.shot(tab, "granted")
}
