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
	t      *testing.T
	tab    context.Context
	shots  string
	prefix string // of the screenshots' names
	n      int
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
		// Chromium leaves its shared-memory files (org.chromium.Chromium.*)
		// in TMPDIR when it is ended: a directory the test removes.
		chromedp.Env("TMPDIR="+t.TempDir()),
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
	start := time.Now()
	defer func() {
		if d := time.Since(start); d > 3*time.Second {
			b.t.Logf("browser actions took %v", d.Round(time.Millisecond))
		}
	}()
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
	start := time.Now()
	defer func() {
		if d := time.Since(start); d > 3*time.Second {
			b.t.Logf("waited %v for %s", d.Round(time.Millisecond), what)
		}
	}()
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
	path := filepath.Join(b.shots, fmt.Sprintf("%s%02d-%s.png", b.prefix, b.n, name))
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
	t.Setenv("HOME", t.TempDir()) // Chromium's, besides its profile directory
	dir := t.TempDir()
	cwd, dbPath := filepath.Join(dir, "ws"), filepath.Join(dir, "journal.db")
	if err := os.Mkdir(cwd, 0o755); err != nil {
		t.Fatal(err)
	}
	specs := []agentSpec{{Name: "demo"}, fakeAgent(t, "fake", fakeScript())}
	ts := startServerIn(t, cwd, dbPath, specs...)
	file := filepath.Join(cwd, demoagent.FileName)
	tab := b.tab

	// Both agents run; no session yet.
	b.run(tab, chromedp.Navigate(ts.URL()))
	watchPolicy(b, tab)
	b.until(tab, "both agents running", `document.querySelectorAll("#agents .badge.running").length === 2`)
	b.until(tab, "the empty session list", `document.querySelector("#sessions")?.textContent.includes("No sessions yet")`)
	b.shot(tab, "agents")

	// A demo session: the text streams, the permission prompt comes, Allow
	// completes the tool and writes the file.
	b.run(tab, click(`[data-new="demo"]`))
	b.until(tab, "the session view", `!document.querySelector("#session").hidden && location.hash.includes("session=")`)
	key := b.js(tab, `decodeURIComponent(location.hash.split("session=")[1])`)
	b.prompt(tab, "Please write the demo file")
	b.until(tab, "the streamed reply", `[...document.querySelectorAll(".msg.text")].some(m => m.textContent.includes("I'm the demo agent"))`)
	b.until(tab, "the permission prompt", count(`.card[data-type="permission"]:not(.settled)`)+" === 1")
	// The prompt's Enter, or the next key, must not land on Allow.
	if got := b.js(tab, `document.activeElement.matches("[data-answer]")`); got != "false" {
		t.Fatal("the permission prompt took the keyboard focus")
	}
	b.shot(tab, "permission")
	// The buttons are the agent's one-time options; the "always" one is
	// named as not offered here.
	b.until(tab, "the options the buttons choose", `document.querySelector('.card[data-type="permission"] [data-answer="allow"]')?.textContent === "Allow" && document.querySelector('.card[data-type="permission"] .note')?.textContent === 'Not offered here: “Always allow” (always allow).'`)
	b.run(tab, click(`.card[data-type="permission"]:not(.settled) [data-answer="allow"]`))
	b.until(tab, "the allowed write completed", count(`.tool[data-tool="call_write"][data-status="completed"]`)+" === 1 && "+count(`.card[data-outcome="allowed"]`)+" === 1")
	b.until(tab, "the turn's end", `!document.querySelector("#send").disabled && document.querySelector("#transcript")?.textContent.includes("Done:")`)
	if data, err := os.ReadFile(file); err != nil || !strings.Contains(string(data), "demo agent") {
		t.Fatalf("after Allow the file holds %q (%v)", data, err)
	}
	b.until(tab, "the diff and the plan", count(".diff .add")+" > 0 && "+count("#plan li.completed")+" === 3")
	b.until(tab, "the session list after the turn", `document.querySelector("#sessions .m")?.textContent.startsWith("demo · open · 1 turn")`)
	b.shot(tab, "allowed")
	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}

	// Reject: refused, the tool fails, nothing written.
	b.prompt(tab, "Write it again")
	b.until(tab, "the second permission prompt", count(`.card[data-type="permission"]:not(.settled)`)+" === 1")
	b.run(tab, click(`.card[data-type="permission"]:not(.settled) [data-answer="reject"]`))
	b.until(tab, "the rejection", count(`.card[data-outcome="rejected"]`)+" === 1 && "+count(`.tool[data-tool="call_write"][data-status="failed"]`)+" === 1")
	b.until(tab, "the turn's end", `!document.querySelector("#send").disabled`)
	// The plan's step that was under way when the turn ended is not.
	b.until(tab, "the plan after the refusal", `document.querySelector("#plan li.unfinished")?.textContent.includes("(not finished: the turn ended)") && !document.querySelector("#plan").textContent.includes("(in progress)")`)
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
	b.run(tab2, click("#cancel"))
	for _, tb := range []context.Context{tab, tab2} {
		b.until(tb, "the cancelled turn in both tabs", count(`.card[data-outcome="cancelled"]`)+" === 2 && document.querySelector('#transcript')?.textContent.includes('nothing was written')")
	}
	cancelTab2()

	// The second agent: a real process; its slow turn is cancelled from
	// the page; the inspector shows its wire, stderr and initialize.
	b.run(tab, click(`[data-new="fake"]`))
	b.until(tab, "the fake agent's session", `document.querySelector("#s-agent")?.textContent === "fake"`)
	b.prompt(tab, "go slow")
	b.until(tab, "the fake agent's text", `document.querySelector("#transcript")?.textContent.includes("Working slowly")`)
	b.until(tab, "Cancel enabled", `!document.querySelector("#cancel").disabled`)
	b.run(tab, click("#cancel"))
	b.until(tab, "the cancelled turn", `document.querySelector("#transcript")?.textContent.includes("The turn ended: cancelled")`)
	b.run(tab, click(`[data-inspect="fake"]`))
	b.until(tab, "the wire trace", `[...document.querySelectorAll("#insp-body .wire.out")].some(l => l.textContent.includes('"session/cancel"'))`)
	b.shot(tab, "inspector-wire")
	b.run(tab, click(`.tabs [data-tab="stderr"]`))
	b.until(tab, "stderr", `document.querySelector("#insp-body")?.textContent.includes("fake agent: ready")`)
	b.run(tab, click(`.tabs [data-tab="init"]`))
	b.until(tab, "the initialize exchange", `document.querySelector("#insp-body")?.textContent.includes("agentCapabilities")`)
	b.shot(tab, "inspector-init")
	b.run(tab, click("#insp-close"))

	noViolations(t, b, tab)
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
	b.run(tab, click("#s-resume"))
	b.until(tab, "the resumed session", `document.querySelector("#s-state")?.textContent === "open"`)
	b.prompt(tab, "Write it after the restart")
	b.until(tab, "the permission prompt after the restart", count(`.card[data-type="permission"]:not(.settled)`)+" === 1")
	b.run(tab, click(`.card[data-type="permission"]:not(.settled) [data-answer="allow"]`))
	b.until(tab, "the write after the restart", count(`.card[data-outcome="allowed"]`)+" === 2 && !document.querySelector('#send').disabled")
	if _, err := os.Stat(file); err != nil {
		t.Fatalf("after the restart's Allow: %v", err)
	}
	b.shot(tab, "resumed")
}

// toolsScript is an agent that wants a sign-in first, then runs a command
// through the host's terminal, or asks the user a question.
func toolsScript() acptest.Script {
	raw := func(s string) []byte { return []byte(s) }
	return acptest.Script{
		Initialize: acptest.InitializeScript{AuthMethods: raw(`[{"id":"login","name":"Log in","type":"agent","description":"the agent's own sign-in"}]`)},
		NewSession: acptest.NewSessionScript{RequireAuth: "login", SessionIDs: []string{"sess_tools"}},
		Prompts: []acptest.Turn{
			{Match: "run", Steps: []acptest.Step{
				{Update: raw(`{"sessionUpdate":"tool_call","toolCallId":"call_sh","title":"Run the greeting","kind":"execute","status":"in_progress"}`)},
				{Terminal: &acptest.Terminal{Command: "sh", Args: []string{"-c", "echo hello from the terminal; echo line two"}, ToolCallID: "call_sh"}},
				{Update: raw(`{"sessionUpdate":"tool_call_update","toolCallId":"call_sh","status":"completed"}`)},
			}},
			{Match: "ask", Steps: []acptest.Step{
				{Request: &acptest.Request{Method: "elicitation/create", Params: raw(`{"sessionId":"sess_tools","message":"Which branch?","mode":"form","requestedSchema":{"type":"object","properties":{"branch":{"type":"string","title":"Branch"}}}}`)}},
			}},
		},
	}
}

// crashyScript is an agent that dies in its first turn and can be resumed
// by the process that replaces it.
func crashyScript() acptest.Script {
	code := 3
	return acptest.Script{
		NewSession:  acptest.NewSessionScript{SessionIDs: []string{"sess_crashy"}},
		LoadSession: acptest.LoadSessionScript{Sessions: []string{"sess_crashy"}},
		Prompts: []acptest.Turn{
			{Match: "crash", Steps: []acptest.Step{{Text: "About to fall over"}, {Stderr: "fatal: out of luck"}, {Exit: &code}}},
			{Steps: []acptest.Step{{Text: "Back on my feet."}}},
		},
	}
}

// TestBrowserStates drives the states beyond the main path: an agent that
// is not installed, a sign-in, live command output, a question, the
// safety state, and an agent that crashes and is restarted.
func TestBrowserStates(t *testing.T) {
	b := newBrowser(t)
	t.Setenv("HOME", t.TempDir()) // Chromium's, besides its profile directory
	dir := t.TempDir()
	cwd := filepath.Join(dir, "ws")
	if err := os.Mkdir(cwd, 0o755); err != nil {
		t.Fatal(err)
	}
	specs := []agentSpec{
		fakeAgent(t, "tools", toolsScript()),
		fakeAgent(t, "crashy", crashyScript()),
		{Name: "missing", Argv: []string{filepath.Join(dir, "no-such-agent")}},
	}
	ts := startServerWith(t, cwd, filepath.Join(dir, "journal.db"), true, specs...)
	tab := b.tab
	b.prefix = "states-"

	b.run(tab, chromedp.Navigate(ts.URL()))
	watchPolicy(b, tab)
	b.until(tab, "the missing agent", `document.querySelector('[data-agent="missing"] .badge')?.textContent === "not installed"`)
	// A short hint of what to do; where it was looked for folded away.
	b.until(tab, "the install hint", `document.querySelector('[data-agent="missing"] .hint')?.textContent.startsWith("Install no-such-agent") && document.querySelector('[data-agent="missing"] details.why:not([open]) pre')?.textContent.includes("no-such-agent")`)
	b.shot(tab, "not-installed")

	// The sign-in: the request comes while the session opens.
	b.run(tab, click(`[data-new="tools"]`))
	b.until(tab, "the sign-in prompt", `document.querySelector('#notices .card[data-type="auth"]') !== null`)
	b.shot(tab, "sign-in")
	b.run(tab, click(`#notices .card[data-type="auth"] button.primary`))
	b.until(tab, "the signed-in session", `document.querySelector("#s-agent")?.textContent === "tools" && document.querySelector("#s-state")?.textContent === "open"`)
	b.until(tab, "the sign-in prompt gone", `document.querySelector('#notices .card[data-type="auth"]') === null`)

	// Live command output under the tool row.
	b.prompt(tab, "run the greeting")
	b.until(tab, "the command's output", `(() => { const o = document.querySelector('.tool[data-tool="call_sh"] .out'); return o && o.textContent.includes("line two"); })()`)
	b.until(tab, "the command's exit", `document.querySelector('.tool[data-tool="call_sh"] .exit')?.textContent === "exit status 0"`)
	b.shot(tab, "terminal")

	// A question, answered in its form.
	b.prompt(tab, "ask me")
	b.until(tab, "the question", `document.querySelector('.card[data-type="elicitation"] input[name="branch"]') !== null`)
	b.run(tab, chromedp.SendKeys(chromedp.CSS(`.card[data-type="elicitation"] input[name="branch"]`), "main"))
	b.shot(tab, "question")
	b.run(tab, click(`.card[data-type="elicitation"] button.primary`))
	b.until(tab, "the answer reaching the agent", `document.querySelector('.card[data-outcome="accepted"]') !== null && document.querySelector("#transcript")?.textContent.includes('"branch":"main"')`)

	// The safety state renders the library's authority event as it comes.
	b.js(tab, `apply(app.current, {kind: "authority", authority: {state: "protected", reason: "the agent asks before it acts"}})`)
	b.until(tab, "the safety state", `document.querySelector("#s-safety")?.dataset.state === "protected"`)
	// The context meter, and "unknown" once the context was compacted.
	b.js(tab, `apply(app.current, {kind: "usage", usage: {known: true, used: 50000, size: 200000, percent: 25}})`)
	b.until(tab, "the context meter", `document.querySelector("#s-meter").textContent.includes("25%") && document.querySelector("#s-meter .bar i")?.style.width === "25%"`)
	b.js(tab, `apply(app.current, {kind: "compaction", compaction: {status: "completed", summary: "older turns folded"}})`)
	b.until(tab, "the meter after compaction", `document.querySelector("#s-meter").textContent === "context: unknown"`)
	b.shot(tab, "answered")
	// An agent's link is a link only when it is http or https.
	b.js(tab, `apply(app.current, {kind: "elicitation", elicitation: {id: "q-js", mode: "url", message: "Open this", url: "javascript:document.title='pwned'"}})`)
	b.js(tab, `apply(app.current, {kind: "elicitation", elicitation: {id: "q-web", mode: "url", message: "Open that", url: "https://example.com/sign-in"}})`)
	b.until(tab, "the links", `document.querySelector('.card[data-request="q-js"] .unlinked')?.textContent.startsWith("javascript:") && `+
		count(`.card[data-request="q-js"] a`)+` === 0 && document.querySelector('.card[data-request="q-web"] a')?.href === "https://example.com/sign-in"`)
	noViolations(t, b, tab)

	// An agent that crashes: the page says so; the next prompt starts it
	// again and it resumes the session.
	b.run(tab, click(`[data-new="crashy"]`))
	b.until(tab, "the crashy session", `document.querySelector("#s-agent")?.textContent === "crashy" && document.querySelector("#s-state")?.textContent === "open"`)
	b.prompt(tab, "crash now")
	b.until(tab, "the crash", `document.querySelector("#transcript")?.textContent.includes("fatal: out of luck") && !document.querySelector("#send").disabled`)
	b.until(tab, "the agent crashed", `document.querySelector('[data-agent="crashy"] .badge')?.textContent === "crashed (exit status 3)" && document.querySelector('[data-agent="crashy"] .stderr pre')?.textContent.includes("fatal: out of luck")`)
	b.shot(tab, "crashed")
	b.prompt(tab, "are you there?")
	b.until(tab, "the restarted agent's answer", `document.querySelector("#transcript")?.textContent.includes("Back on my feet.")`)
	b.until(tab, "the agent running again", `document.querySelector('[data-agent="crashy"] .badge')?.textContent === "running"`)
	b.shot(tab, "restarted-agent")
}

// watchPolicy records, in the page, what its content policy blocks.
func watchPolicy(b *browser, tab context.Context) {
	b.js(tab, `(window.blocked = [], document.addEventListener("securitypolicyviolation", (e) => window.blocked.push(e.violatedDirective + " " + e.blockedURI)), "ok")`)
}

// noViolations fails when the content policy blocked anything of the page.
func noViolations(t *testing.T, b *browser, tab context.Context) {
	t.Helper()
	if got := b.js(tab, `JSON.stringify(window.blocked)`); got != "[]" {
		t.Errorf("the content policy blocked: %s", got)
	}
}

// click clicks the first node a CSS selector finds. The page re-renders
// its lists on every event, so the node found can be replaced before the
// mouse reaches it; then the click looks the selector up again.
func click(sel string) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		for {
			v, err := chromedp.Click(chromedp.CSS(sel))(ctx, t)
			if err == nil || !strings.Contains(err.Error(), "node with given id") || ctx.Err() != nil {
				return v, err
			}
		}
	}
}
