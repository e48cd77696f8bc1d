//go:build browser

package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/acphost/acphost/acptest"
)

// TestBrowserTurns drives the queue, steering and forks from the page:
// prompts typed while a turn runs are queued under the composer, moved
// and removed; the Steer button says what it will do and does it; a
// refused turn pauses the queue until Resume; a fork is listed under its
// parent; a past message offers what the agent can do with it.
func TestBrowserTurns(t *testing.T) {
	b := newBrowser(t)
	t.Setenv("HOME", t.TempDir()) // Chromium's, besides its profile directory
	dir := t.TempDir()
	cwd := filepath.Join(dir, "ws")
	if err := os.Mkdir(cwd, 0o755); err != nil {
		t.Fatal(err)
	}
	ts := startServerIn(t, cwd, filepath.Join(dir, "journal.db"),
		fakeAgent(t, "forks", steerScript(acptest.SteerWireInject, true)), fakeAgent(t, "plain", steerScript("", false)))
	tab := b.tab
	b.prefix = "turns-"
	b.run(tab, chromedp.Navigate(ts.URL()))
	watchPolicy(b, tab)

	// The queue: three prompts typed while a turn runs.
	b.run(tab, click(`[data-new="forks"]`))
	b.until(tab, "the session", `document.querySelector("#s-state")?.textContent === "open"`)
	key := b.js(tab, "app.current.key")
	b.prompt(tab, "hold on")
	b.until(tab, "the held turn", `document.querySelector("#transcript")?.textContent.includes("Holding") && !document.querySelector("#enqueue").hidden`)
	for _, text := range []string{"one", "two", "three"} {
		b.run(tab, chromedp.SendKeys(chromedp.CSS("#prompt"), text+kb.Enter))
		b.until(tab, "the queued prompt "+text, `[...document.querySelectorAll("#queue-list .q-text")].some(e => e.textContent === "`+text+`") && document.querySelector("#prompt").value === ""`)
	}
	queueText := `[...document.querySelectorAll("#queue-list .q-text")].map(e => e.textContent).join(",")`
	b.until(tab, "the queue in order", queueText+` === "one,two,three" && !document.querySelector("#queue").hidden`)
	b.run(tab, click(`#queue-list li:nth-child(3) .q-up`))
	b.until(tab, "three moved up", queueText+` === "one,three,two"`)
	b.run(tab, click(`#queue-list li:nth-child(1) .q-remove`))
	b.until(tab, "one removed", queueText+` === "three,two"`)
	b.shot(tab, "queue")

	// Steer: this agent takes text into its turn.
	b.until(tab, "the Steer button", `document.querySelector("#steer")?.textContent === "Steer" && !document.querySelector("#steer").hidden`)
	b.run(tab, chromedp.SendKeys(chromedp.CSS("#prompt"), "use tabs"), click("#steer"))
	b.until(tab, "the steered text in the turn", `document.querySelector('.msg.steered[data-steer="inject"]')?.textContent === "use tabs" && document.querySelector("#transcript").textContent.includes("steered: use tabs")`)
	// The turn ends, and the queue runs in its order.
	b.until(tab, "the queued turns", `[...document.querySelectorAll(".msg.user .msg-text")].map(e => e.textContent).join(",") === "hold on,three,two" && document.querySelector("#queue").hidden && !document.querySelector("#send").disabled`)
	b.shot(tab, "steered")

	// A refused turn pauses the queue; Resume runs it.
	b.prompt(tab, "break it")
	b.until(tab, "the breaking turn", `document.querySelector("#transcript")?.textContent.includes("Breaking")`)
	b.run(tab, chromedp.SendKeys(chromedp.CSS("#prompt"), "after the pause"+kb.Enter))
	b.until(tab, "the queued prompt", queueText+` === "after the pause"`)
	b.run(tab, chromedp.SendKeys(chromedp.CSS("#prompt"), "go"), click("#steer"))
	b.until(tab, "the paused queue", `!document.querySelector("#queue-paused").hidden && `+queueText+` === "after the pause"`)
	b.shot(tab, "paused")
	b.run(tab, click("#queue-resume"))
	b.until(tab, "the resumed queue", `document.querySelector("#queue").hidden && [...document.querySelectorAll(".msg.user .msg-text")].some(e => e.textContent === "after the pause") && !document.querySelector("#send").disabled`)

	// ACP forks at the end only: a past message offers the transcript
	// fork, labelled, and no native rewind.
	b.until(tab, "the past messages' actions", count(".msg.user .resend-transcript")+" === 5 && "+count(".edit-resend")+" === 0")
	// Fork at the end: the fork opens and is listed under its parent.
	b.until(tab, "the Fork button", `!document.querySelector("#s-fork").hidden && !document.querySelector("#s-fork").disabled`)
	b.run(tab, click("#s-fork"))
	b.until(tab, "the fork under its parent", `app.current.key !== "`+key+`" && document.querySelector('#sessions li[data-session="`+key+`"] > ul.forks > li[data-parent="`+key+`"] .badge.fork') !== null`)
	// Its history reads through the parent.
	b.until(tab, "the fork's inherited history", count(".msg.user")+" === 5")
	b.until(tab, "the fork named by its parent", `document.querySelector('#sessions li[data-parent="`+key+`"] .t')?.textContent === "Fork of hold on"`)
	b.shot(tab, "forked")

	// Resend as transcript on the second message: a transcript fork,
	// badged so, opened with the message in the composer.
	b.run(tab, click(`#sessions button[data-key="`+key+`"]`))
	b.until(tab, "the parent again", `app.current.key === "`+key+`" && `+count(`.msg.user[data-turn="2"] .resend-transcript`)+" === 1")
	b.run(tab, click(`.msg.user[data-turn="2"] .resend-transcript`))
	b.until(tab, "the transcript fork", `app.current.key !== "`+key+`" && document.querySelector("#prompt").value === "three" && `+
		count(`#sessions li[data-session="`+key+`"] > ul.forks > li .badge.tfork`)+" === 1 && "+count(`#sessions li[data-session="`+key+`"] > ul.forks > li`)+" === 2")
	b.run(tab, chromedp.SendKeys(chromedp.CSS("#prompt"), " again"+kb.Enter))
	b.until(tab, "the edited message's answer", `[...document.querySelectorAll(".msg.user .msg-text")].some(e => e.textContent.endsWith("three again")) && document.querySelector("#transcript").textContent.includes("Answered again") && !document.querySelector("#send").disabled`)
	// The fork's queue is its own: the parent's, in the inherited
	// history, is not shown as the fork's.
	b.until(tab, "no queue in the fork", `document.querySelector("#queue").hidden`)
	b.shot(tab, "transcript-fork")

	// Edit and resend is offered where the session says it can rewind
	// (CanFork nil for that turn); it asks for a fork before that turn.
	// No ACP agent can today, so the server refuses, and the page says why.
	// The state is set and the button pressed in one step: a state the
	// page fetches meanwhile would take the button away again.
	if got := b.js(tab, `(() => { const ms = document.querySelectorAll(".msg.user[data-turn]"); const last = Number(ms[ms.length - 1].dataset.turn); `+
		`app.current.info.forks.rewind = [last]; renderMsgActions(app.current); `+
		`const bs = document.querySelectorAll(".edit-resend"); if (bs.length !== 1) return "buttons: " + bs.length; `+
		`if (bs[0].closest(".msg.user").dataset.turn !== String(last)) return "on the wrong message"; bs[0].click(); return "clicked"; })()`); got != "clicked" {
		t.Fatalf("edit and resend: %s", got)
	}
	b.until(tab, "the server's refusal", `[...document.querySelectorAll("#notices .notice")].some(n => n.textContent.includes("can fork only at the end"))`)

	// An agent that cannot steer: the button says it interrupts, and does.
	b.run(tab, click(`[data-new="plain"]`))
	b.until(tab, "the plain session", `document.querySelector("#s-agent")?.textContent === "plain" && document.querySelector("#s-state")?.textContent === "open"`)
	b.until(tab, "no Fork button", `document.querySelector("#s-fork").hidden`)
	b.prompt(tab, "hold on")
	b.until(tab, "the Interrupt button", `document.querySelector("#steer")?.textContent === "Interrupt and send" && !document.querySelector("#steer").hidden`)
	b.shot(tab, "interrupt")
	b.run(tab, chromedp.SendKeys(chromedp.CSS("#prompt"), "do this instead"), click("#steer"))
	b.until(tab, "the interrupting prompt's turn", `document.querySelector("#transcript").textContent.includes("The turn ended: cancelled") && [...document.querySelectorAll(".msg.user .msg-text")].some(e => e.textContent === "do this instead") && document.querySelector("#transcript").textContent.includes("Answered")`)
	noViolations(t, b, tab)
}
