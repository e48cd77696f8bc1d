// Turns the user steers: the prompt queue under the composer, the Steer
// button, fork and "edit and resend" on past messages. Loaded after
// app.js, whose helpers (el, $, api, call, attempt, notice, app) it uses;
// app.js calls renderQueue, renderSteer and renderMsgActions as the
// session's events and state come.
"use strict";

// ---- the queue: the latest queue event holds the whole list ----

function queueEvent(v, ev) {
  // A fork's history reads through its parent's, whose queue is not the
  // fork's.
  if (ev.key && ev.key !== v.key) return;
  const q = ev.queue || {};
  v.queue = q.prompts || [];
  v.queuePaused = !!q.paused;
  if (q.change === "paused" || q.change === "restored") v.queueWhy = q.reason || "";
  if (app.current === v) renderQueue(v);
}

function renderQueue(v) {
  const list = v.queue || [];
  const box = $("queue");
  box.hidden = !list.length;
  const paused = v.open && v.queuePaused && list.length > 0;
  $("queue-paused").hidden = !paused;
  $("queue-why").textContent = "The queue is paused" + (v.queueWhy ? ": " + v.queueWhy : "") + ". Its prompts wait until you resume it.";
  $("queue-clear").disabled = !v.open;
  $("queue-list").replaceChildren(...list.map((p, i) => el("li", { "data-queued": p.id },
    el("span", { class: "q-text", title: p.text }, p.text || "(no text)"),
    el("button", { type: "button", class: "q-up", title: "Run earlier", "aria-label": "Move up", disabled: !v.open || i === 0,
      onclick: () => queueCall("queue/move", { id: p.id, index: i - 1 }) }, "↑"),
    el("button", { type: "button", class: "q-down", title: "Run later", "aria-label": "Move down", disabled: !v.open || i === list.length - 1,
      onclick: () => queueCall("queue/move", { id: p.id, index: i + 1 }) }, "↓"),
    el("button", { type: "button", class: "q-remove", title: "Remove from the queue", "aria-label": "Remove", disabled: !v.open,
      onclick: () => queueCall("queue/remove", { id: p.id }) }, "×"))));
}

// queueCall changes the queue; the change shows when its event comes.
function queueCall(action, body) {
  return attempt(() => call(action, body));
}

$("queue-resume").addEventListener("click", () => queueCall("queue/resume"));
$("queue-clear").addEventListener("click", () => queueCall("queue/clear"));

// enqueue queues the composer's text: what Send does while a turn runs.
async function enqueue() {
  const text = $("prompt").value.trim();
  if (!app.current || !text) return;
  try {
    await call("queue", { text });
    $("prompt").value = "";
  } catch (err) {
    notice("Queueing the prompt: " + err.message, "error");
  }
}
$("enqueue").addEventListener("click", enqueue);

// ---- steering: the button says what it will do ----

// steerPlan is what the Steer button does for the session's steer mode:
// into the turn where the agent can (and, should the turn end first, the
// text is queued rather than lost); where it cannot, the turn is
// interrupted and the text sent now (Queue is the other choice, beside).
function steerPlan(mode) {
  if (mode) return { label: "Steer", fallback: "queue", title: `Put this into the running turn (the agent takes it by ${mode}); if the turn has just ended, it is queued` };
  return { label: "Interrupt and send", fallback: "interrupt", title: "The agent cannot take text into a running turn: this cancels the turn and sends the text as the next prompt" };
}

function renderSteer(v) {
  const b = $("steer");
  const on = v.open && v.busy && !!v.info;
  b.hidden = !on;
  $("enqueue").hidden = !(v.open && v.busy);
  if (!on) return;
  const plan = steerPlan(v.info.steerMode || "");
  b.textContent = plan.label;
  b.title = plan.title;
  b.dataset.fallback = plan.fallback;
}

$("steer").addEventListener("click", async () => {
  const v = app.current;
  const text = $("prompt").value.trim();
  if (!v || !text) { $("prompt").focus(); return; }
  try {
    const r = await call("steer", { text, fallback: $("steer").dataset.fallback });
    $("prompt").value = "";
    if (r.via === "queue") notice("The turn had ended: your text was queued as the next prompt.");
  } catch (err) {
    notice("Steering: " + err.message, "error");
  }
});

// ---- fork and edit-and-resend ----

async function fork(body, text) {
  const v = app.current;
  try {
    const r = await call("fork", body);
    await attempt(loadSessions);
    openView(r.key);
    if (text !== undefined) { $("prompt").value = text; $("prompt").focus(); }
  } catch (err) {
    notice("Forking the session: " + err.message, "error");
  } finally {
    if (app.current === v) renderMsgActions(v);
  }
}

$("s-fork").addEventListener("click", () => fork({}));

function renderFork(v) {
  const f = v.info && v.info.forks;
  const b = $("s-fork");
  b.hidden = !(v.open && f && f.canFork);
  b.disabled = v.busy;
}

// renderMsgActions offers, on each past message of an open session,
// "Edit and resend" where the agent can fork before its turn, else (with
// a journal) "Resend as transcript", which says what it is: a new session
// given the conversation before that message as text.
function renderMsgActions(v) {
  if (app.current !== v) return;
  const f = v.open && v.info && v.info.forks;
  for (const m of $("transcript").querySelectorAll(".msg.user[data-turn]")) {
    let box = m.querySelector(".msg-actions");
    if (!box) { box = el("div", { class: "msg-actions" }); m.append(box); }
    box.replaceChildren();
    const turn = Number(m.dataset.turn);
    if (!f || !turn) continue;
    const text = m.querySelector(".msg-text").textContent;
    if ((f.rewind || []).includes(turn)) {
      box.append(el("button", { type: "button", class: "edit-resend", disabled: v.busy, title: "A fork of this session before this message, with the message in the composer to edit",
        onclick: () => fork({ beforeTurn: turn }, text) }, "Edit and resend"));
    } else if (f.transcript) {
      box.append(el("button", { type: "button", class: "resend-transcript", disabled: v.busy,
        title: "The agent cannot go back to this point" + (f.rewindWhy ? " (" + f.rewindWhy + ")" : "") +
          ". This starts a new session given the conversation before this message as a transcript (text only, not the agent's own state), with the message in the composer to edit.",
        onclick: () => fork({ beforeTurn: turn, transcript: true }, text) }, "Resend as transcript"));
    }
  }
}

// ---- the session list as a tree of forks ----

function sessionTree(sessions) {
  const keys = new Set(sessions.map((s) => s.key));
  const children = new Map();
  const roots = [];
  for (const s of sessions) {
    const parent = s.fork && s.fork.parent;
    if (parent && keys.has(parent) && parent !== s.key) {
      if (!children.has(parent)) children.set(parent, []);
      children.get(parent).push(s);
    } else {
      roots.push(s);
    }
  }
  return { roots, children };
}

function forkBadge(s) {
  if (!s.fork) return null;
  return s.fork.transcript
    ? el("span", { class: "badge tfork", title: "A new session given a transcript of its parent's turns 1–" + s.fork.afterTurn + " (the agent could not fork)" }, "transcript fork")
    : el("span", { class: "badge fork", title: "Forked by the agent after turn " + s.fork.afterTurn }, "fork");
}

// forkTitle names a fork that has no title of its own yet by its parent.
function forkTitle(s, sessions) {
  const parent = s.fork && sessions.find((p) => p.key === s.fork.parent);
  return parent && parent.title ? "Fork of " + parent.title : "";
}
