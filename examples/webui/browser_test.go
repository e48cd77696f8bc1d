//go:build browser

// The browser suite: it drives the page in headless Chromium, as a person
// would, against a server hosting two agents (the demo agent in process and
// the fake agent as a real process). Run it with
//
//	go test -tags browser -count=1 ./examples/webui/
//
// Screenshots of the main states go to $ACPHOST_SCREENSHOTS, or a temp dir
// the log names.
package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/acphost/acphost/acptest"
	"github.com/acphost/acphost/examples/internal/demoagent"
)

// findChromium returns the browser to drive.
func findChromium(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("BROWSER SUITE NOT RUN: no Chromium on PATH (apt-get install -y chromium)")
	return ""
}

// browser is one headless Chromium and its first tab.
type browser struct {
	t     *testing.T
	tab   context.Context
	shots string
	n     int
}

func newBrowser(t *testing.T) *browser {
	exe := findChromium(t)
	shots := os.Getenv("ACPHOST_SCREENSHOTS")
	if shots == "" {
		var err error
		if shots, err = os.MkdirTemp("", "webui-screenshots-"); err != nil {
			t.Fatal(err)
		}
	} else if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshots in %s", shots)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe),
		chromedp.NoSandbox, // as root Chromium refuses to start with its sandbox
		chromedp.WindowSize(1280, 800),
		chromedp.Flag("disable-gpu", true),
		chromedp.UserDataDir(t.TempDir()),
	)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	tab, cancelTab := chromedp.NewContext(allocCtx)
	t.Cleanup(func() { cancelTab(); cancelAlloc() })
	b := &browser{t: t, tab: tab, shots: shots}
	// The first call starts the browser, which lives as long as that
	// call's context: the tab's, without a timeout.
	if err := chromedp.Do(tab, chromedp.EmulateViewport(1280, 800)); err != nil {
		t.Fatalf("starting Chromium: %v", err)
	}
	return b
}

// run runs actions in a tab, bounded so that a missing element fails the
// test instead of hanging it.
func (b *browser) run(tab context.Context, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(tab, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		b.shot(tab, "failure")
		b.t.Fatalf("browser: %v", err)
	}
}

// until waits for a JavaScript condition to hold in a tab.
func (b *browser) until(tab context.Context, what, expr string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(tab, 30*time.Second)
	defer cancel()
	_, err := chromedp.Run(ctx, chromedp.Poll[any](expr, chromedp.WithPollingInterval(20*time.Millisecond)))
	// A page that reloads drops the JavaScript context the poll ran in:
	// poll again in the new one.
	for err != nil && strings.Contains(err.Error(), "Cannot find context") && ctx.Err() == nil {
		time.Sleep(20 * time.Millisecond)
		_, err = chromedp.Run(ctx, chromedp.Poll[any](expr, chromedp.WithPollingInterval(20*time.Millisecond)))
	}
	if err != nil {
		b.shot(tab, "failure")
		body, _ := chromedp.Run(tab, chromedp.Evaluate[string]("document.body.innerText"))
		b.t.Fatalf("browser: waiting for %s (%s): %v\npage text:\n%s", what, expr, err, body)
	}
}

// shot saves a screenshot of a tab's viewport.
func (b *browser) shot(tab context.Context, name string) {
	ctx, cancel := context.WithTimeout(tab, 10*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		b.t.Logf("screenshot %s: %v", name, err)
		return
	}
	b.n++
	path := filepath.Join(b.shots, fmt.Sprintf("%02d-%s.png", b.n, name))
	if err := os.WriteFile(path, png, 0o644); err != nil {
		b.t.Logf("screenshot %s: %v", name, err)
	}
}

// js runs a script in a tab and returns its value as text.
func (b *browser) js(tab context.Context, script string) string {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(tab, 30*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[string]("String("+script+")"))
	if err != nil {
		b.t.Fatalf("browser: %s: %v", script, err)
	}
	return v
}

// prompt types a prompt and sends it with Enter.
func (b *browser) prompt(tab context.Context, text string) {
	b.t.Helper()
	b.until(tab, "the composer to accept a prompt", `!document.querySelector("#send").disabled`)
	b.run(tab, chromedp.SendKeys(chromedp.CSS("#prompt"), text+kb.Enter))
}

// setMode picks the host mode as the selector does, and waits for the
// server to have it.
func (b *browser) setMode(tab context.Context, ts *testServer, key, mode string) {
	b.t.Helper()
	b.js(tab, fmt.Sprintf(`(() => { const s = document.querySelector("#s-mode"); s.value = %q; s.dispatchEvent(new Event("change")); })()`, mode))
	ts.waitFor(b.t, func() bool {
		var st sessionItem
		ts.call(b.t, "GET", "/api/sessions/"+key, nil, 200, &st)
		return string(st.Policy.Mode) == mode
	})
}

// count is a JavaScript expression: the number of elements a selector
// matches.
func count(sel string) string { return fmt.Sprintf("document.querySelectorAll(%q).length", sel) }

// fakeScript is the second agent: it streams a line, and its "slow" turn
// runs until it is cancelled.
func fakeScript() acptest.Script {
	return acptest.Script{
		QuietReports: true,
		OnStart:      []acptest.Step{{Stderr: "fake agent: ready"}},
		Prompts: []acptest.Turn{
			{Match: "slow", Steps: []acptest.Step{{Text: "Working slowly on it"}, {WaitCancel: true}}},
			{Steps: []acptest.Step{{Text: "The fake agent answers."}}},
		},
	}
}

// TestBrowser drives the page through the app's main paths, in one
// browser, with one server and then a restarted one on the same journal.
func TestBrowser(t *testing.T) {
	b := newBrowser(t)
	bin := acptest.BuildBinary(t)
	script := acptest.WriteScript(t, fakeScript())
	home := t.TempDir()
	t.Setenv("HOME", home)
	dir := t.TempDir()
	cwd, dbPath := filepath.Join(dir, "ws"), filepath.Join(dir, "journal.db")
	if err := os.Mkdir(cwd, 0o755); err != nil {
		t.Fatal(err)
	}
	specs := []agentSpec{{Name: "demo"}, {Name: "fake", Argv: []string{bin, "-script", script}}}
	ts := startServerIn(t, cwd, dbPath, specs...)
	file := filepath.Join(cwd, demoagent.FileName)
	tab := b.tab

	// Both agents run; no session yet.
	b.run(tab, chromedp.Navigate(ts.URL()))
	b.until(tab, "both agents running", `document.querySelectorAll("#agents .badge.running").length === 2`)
	b.until(tab, "the empty session list", `document.querySelector("#sessions").textContent.includes("No sessions yet")`)
	b.shot(tab, "agents")

	// A demo session: the text streams, the permission prompt comes, Allow
	// completes the tool and writes the file.
	b.run(tab, chromedp.Click(chromedp.CSS(`[data-new="demo"]`)))
	b.until(tab, "the session view", `!document.querySelector("#session").hidden && location.hash.includes("session=")`)
	key := b.js(tab, `decodeURIComponent(location.hash.split("session=")[1])`)
	b.prompt(tab, "Please write the demo file")
	b.until(tab, "the streamed reply", `[...document.querySelectorAll(".msg.text")].some(m => m.textContent.includes("I'm the demo agent"))`)
	b.until(tab, "the permission prompt", count(`.card[data-type="permission"]:not(.settled)`)+" === 1")
	b.shot(tab, "permission")
	b.run(tab, chromedp.Click(chromedp.CSS(`.card[data-type="permission"]:not(.settled) [data-answer="allow"]`)))
	b.until(tab, "the allowed write completed", count(`.tool[data-tool="call_write"][data-status="completed"]`)+" === 1 && "+count(`.card[data-outcome="allowed"]`)+" === 1")
	b.until(tab, "the turn's end", `!document.querySelector("#send").disabled && document.querySelector("#transcript").textContent.includes("Done:")`)
	if data, err := os.ReadFile(file); err != nil || !strings.Contains(string(data), "demo agent") {
		t.Fatalf("after Allow the file holds %q (%v)", data, err)
	}
	b.until(tab, "the diff and the plan", count(".diff .add")+" > 0 && "+count("#plan li.completed")+" === 3")
	b.shot(tab, "allowed")
	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}

	// Reject: refused, the tool fails, nothing written.
	b.prompt(tab, "Write it again")
	b.until(tab, "the second permission prompt", count(`.card[data-type="permission"]:not(.settled)`)+" === 1")
	b.run(tab, chromedp.Click(chromedp.CSS(`.card[data-type="permission"]:not(.settled) [data-answer="reject"]`)))
	b.until(tab, "the rejection", count(`.card[data-outcome="rejected"]`)+" === 1 && "+count(`.tool[data-tool="call_write"][data-status="failed"]`)+" === 1")
	b.until(tab, "the turn's end", `!document.querySelector("#send").disabled`)
	b.shot(tab, "rejected")

	// Ask: the policy refuses the request without asking.
	b.setMode(tab, ts, key, "ask")
	b.prompt(tab, "And once more")
	b.until(tab, "the policy's refusal", `[...document.querySelectorAll('.card .outcome[data-outcome="cancelled"]')].some(o => o.textContent.includes("policy"))`)
	b.until(tab, "the turn's end", `!document.querySelector("#send").disabled`)
	b.shot(tab, "ask-refused")
	if _, err := os.Stat(file); err == nil {
		t.Fatal("a refused write reached the disk")
	}

	// A second tab on the same session replays it whole, and both follow a
	// turn that the second tab cancels.
	tab2, cancelTab2 := chromedp.NewContext(tab)
	defer cancelTab2()
	if err := chromedp.Do(tab2, chromedp.EmulateViewport(1280, 800)); err != nil { // opens the tab, for as long as tab2 lives
		t.Fatal(err)
	}
	b.run(tab2, chromedp.Navigate(ts.URL()+"#session="+key))
	b.until(tab2, "the history in the second tab", count(".msg.user")+" === 3 && "+count(".card.settled")+" === 3")
	b.setMode(tab, ts, key, "build")
	b.prompt(tab, "Try a fourth time")
	for _, tb := range []context.Context{tab, tab2} {
		b.until(tb, "the fourth prompt in both tabs", count(".msg.user")+" === 4 && "+count(`.card[data-type="permission"]:not(.settled)`)+" === 1")
	}
	b.shot(tab2, "second-tab")
	b.run(tab2, chromedp.Click(chromedp.CSS("#cancel")))
	for _, tb := range []context.Context{tab, tab2} {
		b.until(tb, "the cancelled turn in both tabs", count(`.card[data-outcome="cancelled"]`)+" === 2 && document.querySelector('#transcript').textContent.includes('nothing was written')")
	}
	cancelTab2()

	// The second agent: a real process; its slow turn is cancelled from
	// the page; the inspector shows its wire, stderr and initialize.
	b.run(tab, chromedp.Click(chromedp.CSS(`[data-new="fake"]`)))
	b.until(tab, "the fake agent's session", `document.querySelector("#s-agent").textContent === "fake"`)
	b.prompt(tab, "go slow")
	b.until(tab, "the fake agent's text", `document.querySelector("#transcript").textContent.includes("Working slowly")`)
	b.until(tab, "Cancel enabled", `!document.querySelector("#cancel").disabled`)
	b.run(tab, chromedp.Click(chromedp.CSS("#cancel")))
	b.until(tab, "the cancelled turn", `document.querySelector("#transcript").textContent.includes("The turn ended: cancelled")`)
	b.run(tab, chromedp.Click(chromedp.CSS(`[data-inspect="fake"]`)))
	b.until(tab, "the wire trace", `[...document.querySelectorAll("#insp-body .wire.out")].some(l => l.textContent.includes('"session/cancel"'))`)
	b.shot(tab, "inspector-wire")
	b.run(tab, chromedp.Click(chromedp.CSS(`.tabs [data-tab="stderr"]`)))
	b.until(tab, "stderr", `document.querySelector("#insp-body").textContent.includes("fake agent: ready")`)
	b.run(tab, chromedp.Click(chromedp.CSS(`.tabs [data-tab="init"]`)))
	b.until(tab, "the initialize exchange", `document.querySelector("#insp-body").textContent.includes("agentCapabilities")`)
	b.shot(tab, "inspector-init")
	b.run(tab, chromedp.Click(chromedp.CSS("#insp-close")))

	// Reload on the demo session: the whole history comes back.
	b.run(tab, chromedp.Navigate(ts.URL()+"#session="+key), chromedp.Reload())
	b.until(tab, "the history after reload", count(".msg.user")+" === 4 && "+count(".card.settled")+" === 4 && "+count(`.tool[data-tool="call_write"]`)+" === 4")
	b.shot(tab, "reloaded")
	b.run(tab, chromedp.EmulateViewport(600, 900))
	b.shot(tab, "narrow")
	b.run(tab, chromedp.EmulateViewport(1280, 800))

	// Restart the server on the same journal: the session is listed, its
	// history shows, and it resumes and runs a turn.
	if err := ts.stop(); err != nil {
		t.Fatalf("closing the first server: %v", err)
	}
	ts2 := startServerIn(t, cwd, dbPath, specs...)
	b.run(tab, chromedp.Navigate(ts2.URL()+"#session="+key))
	b.until(tab, "the journaled history after the restart", count(".msg.user")+" === 4 && "+count("#s-resume")+" === 1")
	b.until(tab, "the session list from the journal", count("#sessions li button")+" === 2")
	b.shot(tab, "restarted")
	b.run(tab, chromedp.Click(chromedp.CSS("#s-resume")))
	b.until(tab, "the resumed session", `document.querySelector("#s-state").textContent === "open"`)
	b.prompt(tab, "Write it after the restart")
	b.until(tab, "the permission prompt after the restart", count(`.card[data-type="permission"]:not(.settled)`)+" === 1")
	b.run(tab, chromedp.Click(chromedp.CSS(`.card[data-type="permission"]:not(.settled) [data-answer="allow"]`)))
	b.until(tab, "the write after the restart", count(`.card[data-outcome="allowed"]`)+" === 2 && !document.querySelector('#send').disabled")
	if _, err := os.Stat(file); err != nil {
		t.Fatalf("after the restart's Allow: %v", err)
	}
	b.shot(tab, "resumed")
}
