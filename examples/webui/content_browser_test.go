//go:build browser

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/acphost/acphost/acptest"
)

// onePixelPNG is a valid 1×1 PNG, base64.
const onePixelPNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="

// TestBrowserContentAndToggles: an image in the agent's reply shows
// inline (the content policy allows it), resources show as links, an image
// the bridge dropped as too large says so, and a boolean config option is
// a toggle that sets the option.
func TestBrowserContentAndToggles(t *testing.T) {
	b := newBrowser(t)
	t.Setenv("HOME", t.TempDir())
	dir := t.TempDir()
	cwd := filepath.Join(dir, "ws")
	if err := os.Mkdir(cwd, 0o755); err != nil {
		t.Fatal(err)
	}
	raw := func(s string) []byte { return []byte(s) }
	big := strings.Repeat("A", 2<<20)
	script := acptest.Script{
		QuietReports: true,
		NewSession: acptest.NewSessionScript{ConfigOptions: raw(`[{"id":"fast","name":"Fast mode","type":"boolean","currentValue":false},` +
			`{"id":"odd","name":"Odd","type":"boolean","currentValue":"yes"}]`)},
		Prompts: []acptest.Turn{{Steps: []acptest.Step{
			{Text: "Here is the screenshot:"},
			{Update: raw(`{"sessionUpdate":"agent_message_chunk","content":{"type":"image","data":"` + onePixelPNG + `","mimeType":"image/png"}}`)},
			{Update: raw(`{"sessionUpdate":"agent_message_chunk","content":{"type":"resource_link","uri":"https://example.com/report","name":"report"}}`)},
			{Update: raw(`{"sessionUpdate":"agent_message_chunk","content":{"type":"resource","resource":{"uri":"file:///w/a.go","text":"package a"}}}`)},
			{Update: raw(`{"sessionUpdate":"agent_message_chunk","content":{"type":"image","data":"` + big + `","mimeType":"image/png"}}`)},
		}}},
	}
	ts := startServerIn(t, cwd, filepath.Join(dir, "journal.db"), fakeAgent(t, "media", script))
	tab := b.tab
	b.prefix = "content-"
	b.run(tab, chromedp.Navigate(ts.URL()))
	watchPolicy(b, tab)
	b.until(tab, "the agent running", `document.querySelector('[data-agent="media"] .badge')?.textContent === "running"`)
	b.run(tab, click(`[data-new="media"]`))
	b.until(tab, "the session", `document.querySelector("#s-state")?.textContent === "open"`)

	// The boolean option is a toggle; the one whose value is not a
	// boolean is not shown.
	b.until(tab, "the toggle", count(`#s-config input[type="checkbox"][data-config="fast"]`)+` === 1 && `+count(`#s-config [data-config="odd"]`)+` === 0`)
	b.run(tab, click(`#s-config input[data-config="fast"]`))
	b.until(tab, "the option set on", `document.querySelector('#s-config input[data-config="fast"]').checked && app.current.configOptions.find(o => o.id === "fast")?.currentValue === true`)

	b.prompt(tab, "show me")
	b.until(tab, "the image shown", `(() => { const i = document.querySelector('.msg.content[data-content="image"] img'); return i && i.complete && i.naturalWidth === 1; })()`)
	b.until(tab, "the resource link", `document.querySelector('.msg.content[data-content="resource_link"] a[href="https://example.com/report"]')?.textContent === "report"`)
	b.until(tab, "the embedded resource", `document.querySelector('.msg.content[data-content="resource"] pre')?.textContent === "package a"`)
	b.until(tab, "the dropped image named", `[...document.querySelectorAll('.msg.content[data-content="image"]')].some(m => m.textContent.includes("2048 KiB not shown: too large"))`)
	b.shot(tab, "content")
	noViolations(t, b, tab)
}
