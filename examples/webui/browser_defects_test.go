//go:build browser

package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/acphost/acphost/acptest"
)

// richScript is an agent as real ones are: modes mirrored by a "mode"
// config option, slash commands, Markdown, named permission options, a
// turn with nothing to say, and a mode it refuses.
func richScript() acptest.Script {
	raw := func(s string) []byte { return []byte(s) }
	modes := `[{"id":"default","name":"Default"},{"id":"plan","name":"Plan"},{"id":"read-only","name":"Read Only"}]`
	return acptest.Script{
		QuietReports: true,
		NewSession: acptest.NewSessionScript{
			SessionIDs: []string{"sess_rich"},
			Modes:      raw(`{"currentModeId":"default","availableModes":` + modes + `}`),
			ConfigOptions: raw(`[{"id":"mode","name":"Mode","category":"mode","type":"select","currentValue":"default","options":[{"value":"default","name":"Default"},{"value":"plan","name":"Plan"},{"value":"read-only","name":"Read Only"}]},` +
				`{"id":"model","name":"Model","category":"model","type":"select","currentValue":"m1","options":[{"value":"m1","name":"Model One"}]}]`),
		},
		SetMode: acptest.SetModeScript{Refuse: []string{"plan"}, Report: true},
		Prompts: []acptest.Turn{
			{Match: "commands", Steps: []acptest.Step{
				{Update: raw(`{"sessionUpdate":"available_commands_update","availableCommands":[{"name":"review","description":"Review the changes"},{"name":"init","description":"Write AGENTS.md"}]}`)},
				{Text: "Commands are listed."},
			}},
			{Match: "markdown", Steps: []acptest.Step{{Text: hostileMarkdown}}},
			{Match: "permission", Steps: []acptest.Step{{Permission: &acptest.Permission{
				ToolCall: raw(`{"toolCallId":"call_rm","title":"Remove build/","kind":"delete","status":"pending"}`),
				Options: []acptest.PermissionOption{
					{OptionID: "yes", Name: "Yes, remove it", Kind: "allow_once"},
					{OptionID: "always", Name: "Yes, and don't ask again", Kind: "allow_always"},
					{OptionID: "no", Name: "No, keep it", Kind: "reject_once"},
				},
			}}}},
			{Match: "slow", Steps: []acptest.Step{{Text: "Thinking it over"}, {WaitCancel: true}}},
			{Match: "empty"},
		},
	}
}

// hostileMarkdown is Markdown as an agent sends it, with what a hostile
// one might add: markup, script, a javascript: link, attribute injection.
const hostileMarkdown = "## Plan of *work*\n\nSome **bold** text, `a <b>code</b> span` and [the docs](https://example.com/docs).\n\n" +
	"- first\n- second with [bad](javascript:window.pwned=1)\n\n" +
	"```go\n<script>window.pwned=2</script>\nfmt.Println(\"hi\")\n```\n\n" +
	"<img src=x onerror=\"window.pwned=3\"> [x](https://e.example/\"onmouseover=\"window.pwned=4) <b>not bold</b>"

// TestBrowserDefects checks what real agents showed wrong in the page: the
// Commands panel, the cost, a refused mode, a mode shown twice, raw
// Markdown, progress, the permission card's text, an empty turn and the
// wire inspector.
func TestBrowserDefects(t *testing.T) {
	b := newBrowser(t)
	t.Setenv("HOME", t.TempDir())
	dir := t.TempDir()
	cwd := filepath.Join(dir, "ws")
	if err := os.Mkdir(cwd, 0o755); err != nil {
		t.Fatal(err)
	}
	ts := startServerIn(t, cwd, filepath.Join(dir, "journal.db"), fakeAgent(t, "rich", richScript()))
	tab := b.tab
	b.prefix = "defects-"
	b.run(tab, chromedp.Navigate(ts.URL()))
	watchPolicy(b, tab)
	b.until(tab, "the agent running", `document.querySelector('[data-agent="rich"] .badge')?.textContent === "running"`)
	b.run(tab, click(`[data-new="rich"]`))
	b.until(tab, "the session", `document.querySelector("#s-state")?.textContent === "open"`)

	// One control for the agent's mode: its mirrored "mode" option is not
	// shown again; the model option is.
	b.until(tab, "the agent mode menu", `!document.querySelector("#s-agentmode-l").hidden && document.querySelector("#s-agentmode").value === "default"`)
	b.until(tab, "one mode control", count(`#s-config [data-config="mode"]`)+` === 0 && `+count(`#s-config [data-config="model"]`)+` === 1`)

	// A refused mode: the menu goes back to the mode the session has.
	b.js(tab, `(() => { const s = document.querySelector("#s-agentmode"); s.value = "plan"; s.dispatchEvent(new Event("change")); })()`)
	b.until(tab, "the refusal's notice", `document.querySelector("#notices")?.textContent.includes("agent mode")`)
	b.until(tab, "the menu back on the session's mode", `document.querySelector("#s-agentmode").value === "default"`)
	b.js(tab, `(() => { const s = document.querySelector("#s-agentmode"); s.value = "read-only"; s.dispatchEvent(new Event("change")); })()`)
	b.until(tab, "an accepted mode", `document.querySelector("#s-agentmode").value === "read-only"`)

	// The Commands panel lists the commands.
	b.prompt(tab, "commands please")
	b.until(tab, "the commands", `document.querySelector("#commands")?.textContent === "Commands/review/init"`)

	// Markdown is rendered, and nothing of it runs or links outside http(s).
	b.prompt(tab, "markdown please")
	b.until(tab, "the rendered Markdown", `(() => { const m = [...document.querySelectorAll(".msg.text")].pop();
		return m && m.querySelector(".md-h em")?.textContent === "work" && m.querySelector("strong")?.textContent === "bold" &&
			m.querySelector("p code")?.textContent === "a <b>code</b> span" && m.querySelectorAll("li").length === 2 &&
			m.querySelector('a[href="https://example.com/docs"]')?.textContent === "the docs" &&
			m.querySelector("pre.code code")?.textContent.includes("<script>window.pwned=2</script>") &&
			m.textContent.includes('<img src=x onerror="window.pwned=3">') && m.textContent.includes("<b>not bold</b>"); })()`)
	if got := b.js(tab, `(() => { const m = [...document.querySelectorAll(".msg.text")].pop();
		return [window.pwned, m.querySelectorAll("script, img, b, [onerror], [onmouseover]").length,
			[...m.querySelectorAll("a")].map(a => a.protocol + (a.getAttribute("onmouseover") || "")).join(" ")].join("|"); })()`); got != "|0|https: https:" {
		t.Errorf("hostile Markdown: pwned|elements|links = %q, want %q", got, "|0|https: https:")
	}

	// The permission card names the agent's options.
	b.prompt(tab, "permission please")
	b.until(tab, "the permission card", count(`.card[data-type="permission"]:not(.settled)`)+` === 1`)
	b.until(tab, "the progress while the agent waits", `document.querySelector("#s-working:not([hidden])")?.dataset.state === "waiting"`)
	b.until(tab, "the options' names", `(() => { const c = document.querySelector('.card[data-type="permission"]');
		return c.querySelector('[data-answer="allow"]').textContent === "Yes, remove it" && c.querySelector('[data-answer="reject"]').textContent === "No, keep it" &&
			c.querySelector(".note")?.textContent === 'Not offered here: “Yes, and don\'t ask again” (always allow).' && !c.textContent.includes("Allow:"); })()`)
	b.shot(tab, "permission")
	b.run(tab, click(`.card[data-type="permission"]:not(.settled) [data-answer="allow"]`))
	b.until(tab, "the allowed request", count(`.card[data-outcome="allowed"]`)+` === 1 && !document.querySelector("#send").disabled`)

	// A turn with nothing to show says so.
	b.prompt(tab, "empty please")
	b.until(tab, "the empty turn's line", `document.querySelector("#transcript .line.empty-turn")?.textContent === "The agent ended the turn without a reply."`)
	if got := b.js(tab, count("#transcript .line.empty-turn")); got != "1" {
		t.Errorf("%s empty-turn lines, want 1 (only the empty turn)", got)
	}

	// While the agent works the page says so, beyond the badge.
	b.prompt(tab, "slow please")
	b.until(tab, "the progress", `document.querySelector("#s-working:not([hidden])")?.dataset.state === "working" && document.querySelector("#s-working").textContent.startsWith("The agent is working · ")`)
	b.shot(tab, "working")
	b.run(tab, click("#cancel"))
	b.until(tab, "the progress gone", `document.querySelector("#s-working").hidden && !document.querySelector("#send").disabled`)

	// Money with sensible precision.
	b.js(tab, `apply(app.current, {kind: "usage", usage: {known: true, used: 1000, size: 200000, cost: {amount: 0.000017999999999999997, currency: "USD"}}})`)
	b.until(tab, "a small cost", `document.querySelector("#s-meter").textContent.endsWith(" · 0.000018 USD")`)
	b.js(tab, `apply(app.current, {kind: "usage", usage: {known: true, used: 1000, size: 200000, cost: {amount: 12.3456, currency: "USD"}}})`)
	b.until(tab, "a larger cost", `document.querySelector("#s-meter").textContent.endsWith(" · 12.35 USD")`)

	// The wire inspector folds each message and pretty-prints it.
	b.run(tab, click(`[data-inspect="rich"]`))
	b.until(tab, "the folded prompt", `(() => { const r = [...document.querySelectorAll("#insp-body details.wire.out")].find(d => d.querySelector("summary").textContent.startsWith("→ session/prompt #"));
		return r && !r.open && r.querySelector("pre").textContent.includes('\n  "method": "session/prompt",\n') && getComputedStyle(r.querySelector("pre")).whiteSpace === "pre"; })()`)
	// Unfolded, a row stays open across the inspector's refreshes.
	b.js(tab, `(() => { const r = document.querySelector("#insp-body details.wire"); r.open = true; r.dispatchEvent(new Event("toggle")); window.firstRow = r.dataset.key; })()`)
	b.js(tab, `inspector.refresh()`)
	b.until(tab, "the unfolded row after a refresh", `document.querySelector("#insp-body details.wire[open]")?.dataset.key === window.firstRow`)
	b.shot(tab, "inspector")
	noViolations(t, b, tab)
}
