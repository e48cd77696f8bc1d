// The acphost web UI: plain JavaScript, no build step. The server streams
// the bridge's events (Server-Sent Events, one Event JSON per message, its
// Pos as the id); this page folds them into what it shows with the rules
// of bridge.SessionView, and answers through the JSON API.
"use strict";

const $ = (id) => document.getElementById(id);

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") e.className = v;
    else if (k === "style") Object.assign(e.style, v); // CSSOM: the page's CSP allows no style attributes
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

// link is an anchor to url when it is http or https, else url as plain
// text: an agent's link must never run script (javascript:) or open
// data: or file: pages from this one.
function link(url, text) {
  let scheme = "";
  try { scheme = new URL(url).protocol; } catch { /* not a URL: text */ }
  if (scheme === "http:" || scheme === "https:") return el("a", { href: url, target: "_blank", rel: "noopener noreferrer" }, text);
  return el("span", { class: "unlinked", title: "not an http(s) address, so not a link" }, text === url ? url : text + ": " + url);
}

async function api(path, body) {
  const init = body === undefined ? {} : {
    method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
  };
  const res = await fetch(path, init);
  const text = await res.text();
  let data = {};
  try { data = text ? JSON.parse(text) : {}; } catch { data = { error: text.trim() }; }
  if (!res.ok) {
    const err = new Error(data.error || res.status + " " + res.statusText);
    err.data = data; // the rest of the answer: a restore's conflicts, say
    throw err;
  }
  return data;
}

// ---- notices: failures of the page's own calls and agent-wide events ----

function notice(text, kind, actions) {
  const n = el("div", { class: "notice " + (kind || "") }, el("span", {}, text), actions || [],
    el("button", { type: "button", onclick: () => n.remove(), "aria-label": "Dismiss" }, "×"));
  $("notices").append(n);
  return n;
}

async function attempt(fn) {
  try { return await fn(); } catch (err) { notice(err.message, "error"); return undefined; }
}

// ---- agents and sessions ----

const app = { agents: [], sessions: [], current: null };

const stateText = {
  running: "running", stopped: "stopped", crashed: "crashed", starting: "starting…",
  "not-installed": "not installed", "sign-in": "sign-in needed", failed: "failed to start",
};

async function loadAgents() {
  const data = await api("/api/agents");
  app.agents = data.agents;
  $("cwd").textContent = (data.remote ? "remote: " : "") + data.cwd;
  const list = $("agents");
  list.replaceChildren();
  if (!data.agents.length) list.append(el("li", { class: "empty" }, "No agents configured."));
  for (const a of data.agents) {
    list.append(el("li", { "data-agent": a.name },
      el("div", { class: "name" }, a.title || a.name, a.title && !a.title.includes("(" + a.name + ")") && a.title !== a.name ? el("span", { class: "kind" }, " (" + a.name + ")") : ""),
      el("div", { class: "row" },
        el("span", { class: "badge " + a.state, title: a.state === "stopped" || a.state === "crashed" ? "Its process ended; the next prompt or a new session starts it again" : "" },
          (stateText[a.state] || a.state) + (a.exit ? " (" + a.exit + ")" : "")),
        el("button", { type: "button", class: "primary", "data-new": a.name,
          disabled: a.state === "starting", onclick: () => newSession(a.name) }, "New session"),
        el("button", { type: "button", "data-inspect": a.name, onclick: () => inspector.open(a.name) }, "Inspect")),
      a.hint ? el("div", { class: "err hint" }, a.hint) : null,
      a.error && a.hint ? el("details", { class: "why" }, el("summary", {}, "details"), el("pre", {}, a.error)) : null,
      a.error && !a.hint ? el("div", { class: "err" }, a.error) : null,
      a.stderr ? el("details", { class: "stderr" }, el("summary", {}, "its last stderr"), el("pre", {}, a.stderr)) : null));
  }
  if (data.agents.some((a) => a.state === "starting")) setTimeout(loadAgents, 500);
  if (app.current) renderCurrentBadges();
}

function ago(t) {
  if (!t) return "";
  const s = (Date.now() - new Date(t).getTime()) / 1000;
  if (s < 60) return "just now";
  if (s < 3600) return Math.floor(s / 60) + " min ago";
  if (s < 86400) return Math.floor(s / 3600) + " h ago";
  return new Date(t).toLocaleDateString();
}

async function loadSessions() {
  const data = await api("/api/sessions");
  app.sessions = data.sessions;
  const list = $("sessions");
  list.replaceChildren();
  if (!data.sessions.length) list.append(el("li", { class: "empty" }, "No sessions yet: start one with an agent above."));
  // Forks are listed under their parents (turns.js: sessionTree).
  const { roots, children } = sessionTree(data.sessions);
  const item = (s) => {
    const current = app.current && app.current.key === s.key;
    const kids = children.get(s.key) || [];
    return el("li", { class: s.outside ? "outside" : null, "data-session": s.key, "data-parent": s.fork ? s.fork.parent : null },
      el("button", { type: "button", "data-key": s.key, "aria-current": current ? "true" : "false", onclick: () => openView(s.key) },
        el("span", { class: "t" }, s.title || forkTitle(s, data.sessions) || "Untitled session"),
        el("span", { class: "m" }, forkBadge(s), s.fork ? " " : "", s.agent, " · ", s.open ? (s.busy ? "working" : "open") : "closed",
          s.turns ? " · " + s.turns + " turn" + (s.turns > 1 ? "s" : "") : "", s.updatedAt ? " · " + ago(s.updatedAt) : "",
          s.outside ? " · outside this server's workspace" : "")),
      kids.length ? el("ul", { class: "forks" }, kids.map(item)) : null);
  };
  list.append(...roots.map(item));
}

let sessionsTimer = 0;
function refreshSoon() {
  clearTimeout(sessionsTimer);
  sessionsTimer = setTimeout(() => { attempt(loadSessions); if (app.current) attempt(loadState); }, 150);
}

async function newSession(agent) {
  const btn = document.querySelector(`[data-new="${CSS.escape(agent)}"]`);
  if (btn) { btn.disabled = true; btn.textContent = "Starting…"; }
  try {
    const data = await api("/api/sessions", { agent });
    await loadSessions();
    openView(data.key);
  } catch (err) {
    notice("Could not start a session of " + agent + ": " + err.message, "error");
  } finally {
    await attempt(loadAgents);
  }
}

// ---- the global stream: agent-wide events and list refreshes ----

function connectGlobal() {
  const es = new EventSource("/api/events?after=now");
  es.addEventListener("ready", () => { $("conn").textContent = "connected"; $("conn").className = "conn"; });
  es.onerror = () => { $("conn").textContent = "reconnecting…"; $("conn").className = "conn bad"; };
  es.addEventListener("failure", (m) => {
    es.close();
    $("conn").textContent = "disconnected: " + JSON.parse(m.data).error;
    $("conn").className = "conn bad";
  });
  es.onmessage = (m) => {
    const ev = JSON.parse(m.data);
    if (!ev.key) return agentWide(ev);
    if (["session", "session_info", "turn_start", "turn_end", "session_closed"].includes(ev.kind)) refreshSoon();
    // A session that opens may have started its agent (again).
    if (ev.kind === "session") attempt(loadAgents);
  };
}

function agentWide(ev) {
  switch (ev.kind) {
    case "exited":
      notice(`Agent ${ev.bridge} exited${ev.error ? ": " + ev.error.message : ""}. It starts again with the next prompt.`, "error");
      attempt(loadAgents);
      break;
    case "error":
      notice(`Agent ${ev.bridge}: ${ev.error ? ev.error.message : "error"}`, "error");
      break;
    case "notice":
      notice(`Agent ${ev.bridge}: ${ev.text}`);
      break;
    case "auth_required":
      if (ev.auth) {
        const box = el("div", { class: "notice" });
        box.append(authCard(ev, null));
        $("notices").append(box);
        authCards.set(ev.bridge + "/" + ev.auth.id, box);
      }
      break;
    case "decision": {
      const k = ev.bridge + "/" + (ev.decision && ev.decision.request);
      if (authCards.has(k)) { authCards.get(k).remove(); authCards.delete(k); }
      break;
    }
  }
}
const authCards = new Map();

// ---- one session's view ----

function openView(key) {
  if (app.current) app.current.es.close();
  history.replaceState(null, "", location.pathname + "#session=" + encodeURIComponent(key));
  const v = {
    key, es: null, busy: false, open: false, lastBlock: null, rows: [], cards: new Map(), termHeld: new Map(),
    agentModes: null, authority: null, queue: [], queuePaused: false,
  };
  app.current = v;
  $("welcome").hidden = true;
  $("session").hidden = false;
  $("transcript").replaceChildren();
  $("plan").replaceChildren(el("li", { class: "empty" }, "No plan yet."));
  $("commands").replaceChildren();
  $("s-title").textContent = "Session";
  $("s-agentmode-l").hidden = true;
  $("s-config").replaceChildren();
  setSafety(null);
  setMeter(null);
  renderQueue(v);
  for (const b of document.querySelectorAll(".sessions button")) b.setAttribute("aria-current", b.dataset.key === key ? "true" : "false");
  attempt(loadState);
  // The whole history of the session replays from the journal, then live
  // events follow; a reconnect resumes after Last-Event-ID.
  v.es = new EventSource("/api/events?key=" + encodeURIComponent(key));
  v.es.onmessage = (m) => { if (app.current === v) apply(v, JSON.parse(m.data)); };
  // A stream the server ended with a failure is not retried (it would fail
  // the same way): the notice says so.
  v.es.addEventListener("failure", (m) => {
    v.es.close();
    notice("The session's event stream failed: " + JSON.parse(m.data).error + ". Reload the page to try again.", "error");
  });
  $("prompt").focus();
}

// loadState fetches the session's state. Answers can cross: only the
// newest request's is applied, and not over a mode change still on its way.
async function loadState() {
  const v = app.current;
  if (!v) return;
  const seq = (v.stateSeq = (v.stateSeq || 0) + 1);
  const s = await api("/api/sessions/" + encodeURIComponent(v.key));
  if (app.current !== v || seq !== v.stateSeq) return;
  v.info = s;
  v.open = s.open;
  // Whether a turn runs comes from the session's own stream (turn_start,
  // turn_end), which is ahead of this state.
  if (s.title) { $("s-title").textContent = s.title; v.titled = true; }
  if (!v.modeChanging) $("s-mode").value = s.policy.mode;
  renderCurrentBadges();
}

function renderCurrentBadges() {
  const v = app.current;
  if (!v || !v.info) return;
  const s = v.info;
  const a = app.agents.find((x) => x.name === s.agent);
  $("s-agent").textContent = s.agent;
  $("s-state").textContent = v.open ? (v.busy ? "working" : "open") : "closed";
  $("s-state").className = "badge " + (v.open ? (v.busy ? "busy" : "open") : "");
  $("s-compact").hidden = !(v.open && a && a.canCompact);
  $("s-close").hidden = !v.open;
  $("s-mode").disabled = !v.open;
  $("send").disabled = !v.open || v.busy || !!v.sending;
  $("cancel").disabled = !v.open || !v.busy;
  renderWorking(v);
  renderSteer(v);
  renderFork(v);
  renderQueue(v);
  renderMsgActions(v);
  const banner = $("s-banner");
  banner.replaceChildren();
  banner.className = "banner";
  if (!v.open) {
    banner.hidden = false;
    if (s.outside) {
      banner.append(`This session ran in ${s.cwd}, outside this server's workspace; it is not reopened here (start webui with --cwd there). Its history is shown from the journal.`);
    } else if (s.known) {
      banner.append("This session is not running. Its history is shown from the journal.",
        el("button", { type: "button", class: "primary", id: "s-resume", onclick: resume }, "Resume session"));
    } else {
      banner.append(`This session's agent (${s.agent}) is not one this server runs; its history is shown from the journal.`);
    }
  } else if (a && a.state !== "running" && a.state !== "stopped") {
    banner.hidden = false;
    banner.className = "banner error";
    banner.append(`Agent ${a.name}: ${stateText[a.state] || a.state}${a.exit ? " (" + a.exit + ")" : ""}${a.hint ? ": " + a.hint : a.error ? ": " + a.error : ""}`);
  } else {
    banner.hidden = true;
  }
}

// renderWorking shows, while a turn runs, that the agent works and for how
// long, or that it waits for an answer on a card: more than a badge at the
// top of a long transcript.
function renderWorking(v) {
  clearTimeout(v.workingTimer);
  if (app.current !== v) return; // another session's view owns the line now
  const w = $("s-working");
  const on = v.open && v.busy;
  w.hidden = !on;
  if (!on) return;
  const waiting = $("transcript").querySelector('.card[data-type]:not(.settled)');
  const secs = Math.max(0, Math.round((Date.now() - (v.busySince || Date.now())) / 1000));
  w.dataset.state = waiting ? "waiting" : "working";
  w.replaceChildren(el("span", { class: "spinner", "aria-hidden": "true" }),
    waiting ? "The agent waits for your answer" : "The agent is working", " · " + (secs < 60 ? secs + " s" : Math.floor(secs / 60) + " min " + (secs % 60) + " s"));
  v.workingTimer = setTimeout(() => renderWorking(v), 1000);
}

async function resume() {
  const v = app.current;
  const btn = $("s-resume");
  if (btn) { btn.disabled = true; btn.textContent = "Resuming…"; }
  await attempt(() => api("/api/sessions/" + encodeURIComponent(v.key) + "/open", {}));
  await attempt(loadState);
  attempt(loadSessions);
}

function call(action, body) {
  const v = app.current;
  return api("/api/sessions/" + encodeURIComponent(v.key) + "/" + action, body || {});
}

// ---- folding events into the view ----

function scrollDown() {
  const t = $("transcript");
  if (t.scrollHeight - t.scrollTop - t.clientHeight < 160) t.scrollTop = t.scrollHeight;
}

function add(v, node, ev) {
  if (ev && ev.replay) node.classList.add("replay");
  $("transcript").append(node);
  v.lastBlock = null;
  v.turnShown = true;
  scrollDown();
  return node;
}

function line(v, text, cls, ev) { return add(v, el("div", { class: "line " + (cls || "") }, text), ev); }

function apply(v, ev) {
  switch (ev.kind) {
    case "text": case "thinking": case "user_text": return ev.content ? addContent(v, ev) : addText(v, ev);
    case "turn_start":
      v.busy = true;
      v.sending = false;
      v.lastError = "";
      // Until the agent names the session, its first prompt does (as the list).
      if (!v.titled && ev.text) { $("s-title").textContent = shorten(ev.text); v.titled = true; }
      add(v, el("div", { class: "msg user", "data-turn": ev.turn || null }, el("span", { class: "msg-text" }, ev.text || "")), ev);
      v.turnShown = false; // until the agent shows something of this turn
      v.busySince = Date.parse(ev.time) || Date.now();
      return renderCurrentBadges();
    case "turn_end": return turnEnd(v, ev);
    case "exited":
      v.busy = false;
      line(v, "The agent exited" + (ev.error ? ": " + ev.error.message : "") + ". It starts again with the next prompt.", "error", ev);
      return renderCurrentBadges();
    case "tool_start": case "tool_update": case "tool_end": return toolEvent(v, ev);
    case "terminal": return terminalEvent(v, ev);
    case "permission": return permissionCard(v, ev);
    case "elicitation": return elicitationCard(v, ev);
    case "auth_required": {
      const c = add(v, authCard(ev, v), ev);
      v.cards.set(ev.auth.id, c);
      return;
    }
    case "decision": return decided(v, ev);
    case "elicitation_complete": { // the agent says the step at the URL is done
      const card = v.cards.get(ev.elicitation.id);
      if (card) { card.dataset.complete = "true"; return card.append(el("div", { class: "note" }, "Completed.")); }
      return line(v, "Completed: " + (ev.elicitation.message || ev.elicitation.url), "", ev);
    }
    case "plan": case "todos": v.plan = ev; v.turnShown = true; return renderPlan(ev, false);
    case "usage": return setMeter(ev.usage);
    case "compaction": return compaction(v, ev);
    case "agent_mode": return setAgentMode(v, ev.agentMode);
    case "session": return sessionReady(v, ev);
    case "config": return renderConfig(ev.configOptions);
    case "model": return renderModels(ev.models);
    case "commands": return renderCommands(ev.commands);
    case "session_info":
      if (ev.sessionInfo && ev.sessionInfo.titleChanged) { $("s-title").textContent = ev.sessionInfo.title || "Untitled session"; v.titled = true; }
      return;
    case "session_closed":
      v.open = false; v.busy = false;
      line(v, "Session closed.", "", ev);
      return refreshSoon();
    case "error":
      v.lastError = ev.error ? ev.error.message : "";
      return line(v, "Error: " + (ev.error ? ev.error.message : "unknown"), "error", ev);
    case "notice": // the agent's own notices carry a severity and a detail
      return line(v, ev.text + (ev.notice && ev.notice.description ? ": " + ev.notice.description : ""), ev.notice && ev.notice.severity === "error" ? "error" : "", ev);
    case "authority": return setSafety(ev.authority);
    case "queue": return queueEvent(v, ev);
    case "changes": return changesEvent(v, ev);
    default: return extEvent(v, ev);
  }
}

function shorten(text) {
  const t = text.split(/\s+/).join(" ").trim();
  return t.length > 80 ? t.slice(0, 79) + "…" : t;
}

// addText adds a chunk to the message it continues, or starts one. The
// agent's text and thinking are Markdown, rendered anew as chunks come
// (a chunk may close what an earlier one opened); the user's is shown as
// typed.
function addText(v, ev) {
  const b = v.lastBlock;
  // Text steered into a turn is a message of its own, marked so.
  if (ev.steer) {
    if (ev.text.trim() === "") return;
    add(v, el("div", { class: "msg user_text steered", "data-steer": ev.steer }, ev.text), ev);
    return;
  }
  if (b && b.kind === ev.kind && (b.messageId || "") === (ev.messageId || "")) {
    b.raw += ev.text;
  } else if (ev.text.trim() !== "") {
    const node = add(v, el("div", { class: "msg " + ev.kind + (ev.kind === "user_text" ? "" : " md") }), ev);
    v.lastBlock = { kind: ev.kind, messageId: ev.messageId || "", node, raw: ev.text.replace(/^\n+/, "") };
  } else {
    return;
  }
  const blk = v.lastBlock;
  if (ev.kind === "user_text" || blk.raw.length > 200000) blk.node.replaceChildren(blk.raw); // past that, re-rendering each chunk costs too much
  else blk.node.replaceChildren(markdown(blk.raw));
  scrollDown();
}

// addContent shows a piece of a message that is not text: an image inline
// (the page's CSP allows data: images only), a resource as a link (http(s)
// only, see link) with its text, audio and anything the bridge dropped as
// a label saying so.
function addContent(v, ev) {
  const c = ev.content;
  const parts = [];
  if (c.type === "image" && c.data && /^image\/(png|jpeg|gif|webp)$/.test(c.mimeType || "")) {
    parts.push(el("img", { class: "content-image", src: "data:" + c.mimeType + ";base64," + c.data, alt: c.uri || "image" }));
  } else if (c.type === "resource_link") {
    parts.push(link(c.uri, c.title || c.name || c.uri));
  } else if (c.type === "resource" && c.resource) {
    parts.push(link(c.resource.uri, c.resource.uri));
    if (typeof c.resource.text === "string") parts.push(el("pre", { class: "content-text" }, c.resource.text));
  } else {
    parts.push(el("span", { class: "content-label" }, c.type + (c.mimeType ? " (" + c.mimeType + ")" : "") + (c.uri ? " " + c.uri : "")));
  }
  if (ev.contentDropped) parts.push(el("span", { class: "content-label" }, " " + Math.ceil(ev.contentDropped / 1024) + " KiB not shown: too large"));
  add(v, el("div", { class: "msg content " + ev.kind, "data-content": c.type }, parts), ev);
}

// ---- Markdown: a safe subset, built as DOM nodes ----
//
// Agent text is untrusted: it is never parsed as HTML. Blocks (headings,
// fenced code, lists, quotes, paragraphs) and inline spans (code,
// emphasis, links) become elements whose text is set as text; a link is a
// link only when it is http(s) (link). Anything else stays literal text.

function markdown(src) {
  const frag = document.createDocumentFragment();
  const lines = src.replace(/\r\n?/g, "\n").split("\n");
  let i = 0;
  const listItem = /^\s{0,3}([-*+]|\d{1,9}[.)])\s+(.*)$/;
  while (i < lines.length) {
    const l = lines[i];
    const fence = l.match(/^\s{0,3}(```+|~~~+)\s*([\w+-]*)/);
    if (fence) {
      const body = [];
      for (i++; i < lines.length && !lines[i].trim().startsWith(fence[1]); i++) body.push(lines[i]);
      i++; // the closing fence (or the end: a block still streaming)
      frag.append(el("pre", { class: "code" }, el("code", fence[2] ? { "data-lang": fence[2] } : {}, body.join("\n"))));
      continue;
    }
    const h = l.match(/^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$/);
    if (h) {
      frag.append(el("h" + Math.min(6, h[1].length + 2), { class: "md-h" }, inline(h[2])));
      i++;
      continue;
    }
    if (listItem.test(l)) {
      const ordered = /\d/.test(l.match(listItem)[1]);
      const list = el(ordered ? "ol" : "ul", {});
      for (; i < lines.length && listItem.test(lines[i]); i++) list.append(el("li", {}, inline(lines[i].match(listItem)[2])));
      frag.append(list);
      continue;
    }
    if (/^\s{0,3}>/.test(l)) {
      const body = [];
      for (; i < lines.length && /^\s{0,3}>/.test(lines[i]); i++) body.push(lines[i].replace(/^\s{0,3}>\s?/, ""));
      frag.append(el("blockquote", {}, markdown(body.join("\n"))));
      continue;
    }
    if (l.trim() === "") { i++; continue; }
    const para = [];
    for (; i < lines.length && lines[i].trim() !== "" && !listItem.test(lines[i]) &&
      !/^\s{0,3}(```|~~~|#{1,6}\s|>)/.test(lines[i]); i++) para.push(lines[i]);
    frag.append(el("p", {}, inline(para.join("\n"))));
  }
  return frag;
}

// inline renders code spans, links, strong and emphasis as nodes; what
// they enclose is rendered again, except code, which is literal.
const inlineRe = /(`+)([^`][\s\S]*?)\1(?!`)|\[([^\]\n]+)\]\(([^()\s]+)\)|\*\*(?=\S)([\s\S]*?\S)\*\*|(?<!\w)__(?=\S)([\s\S]*?\S)__(?!\w)|\*(?=[^\s*])([^*\n]*?[^\s*])\*|(?<!\w)_(?=[^\s_])([^_\n]*?[^\s_])_(?!\w)/g;

function inline(text) {
  const out = [];
  let last = 0;
  for (const m of text.matchAll(inlineRe)) {
    if (m.index > last) out.push(text.slice(last, m.index));
    if (m[2] !== undefined) out.push(el("code", {}, m[2]));
    else if (m[3] !== undefined) out.push(link(m[4], m[3]));
    else if (m[5] !== undefined || m[6] !== undefined) out.push(el("strong", {}, inline(m[5] !== undefined ? m[5] : m[6])));
    else out.push(el("em", {}, inline(m[7] !== undefined ? m[7] : m[8])));
    last = m.index + m[0].length;
  }
  if (last < text.length) out.push(text.slice(last));
  return out;
}

function turnEnd(v, ev) {
  v.busy = false;
  v.sending = false;
  const lastError = v.lastError;
  v.lastError = "";
  for (const r of v.rows) if (r.turn === ev.turn && isOpen(r.tool)) { r.tool.status = "unfinished"; renderTool(r); }
  if (v.plan) renderPlan(v.plan, true);
  // The failure was shown already when its error event came just before.
  if (ev.error && ev.error.message !== lastError) line(v, "The turn failed: " + ev.error.message, "error", ev);
  else if (ev.error) line(v, "The turn failed.", "error", ev);
  else if (ev.stopReason && ev.stopReason !== "end_turn") line(v, "The turn ended: " + ev.stopReason.replace("_", " ") + ".", ev.stopReason === "cancelled" ? "error" : "", ev);
  // A turn that ends with nothing of the agent's says so, or it would
  // look as if the prompt were lost.
  else if (v.turnShown === false) line(v, "The agent ended the turn without a reply.", "empty-turn", ev);
  renderCurrentBadges();
  refreshSoon();
}

// Tool rows follow SessionView.applyTool: one row per tool call id within
// its turn; updates of turn 0 or late ones find the newest row of the id.
function isOpen(t) { return !["completed", "failed", "cancelled", "unfinished"].includes(t.status); }

function findRow(v, id, turn, anyTurn) {
  for (let i = v.rows.length - 1; i >= 0; i--) {
    const r = v.rows[i];
    if (r.tool.id === id && (r.turn === turn || anyTurn)) return r;
  }
  return null;
}

function toolEvent(v, ev) {
  if (!ev.tool) return;
  let r = findRow(v, ev.tool.id, ev.turn || 0, ev.kind !== "tool_start" && (!ev.turn || ev.late));
  if (!r) {
    // A subagent's call (tool.parent: its task's call) is indented under it.
    r = { turn: ev.turn || 0, tool: ev.tool, output: "", exit: null, node: el("div", { class: ev.tool.parent ? "tool nested" : "tool", "data-parent": ev.tool.parent || null }) };
    v.rows.push(r);
    add(v, r.node, ev);
  }
  r.tool = ev.tool;
  for (const c of r.tool.content || []) {
    const held = c.type === "terminal" && v.termHeld.get(c.terminalId);
    if (held) { addOutput(r, held); v.termHeld.delete(c.terminalId); }
  }
  renderTool(r);
  scrollDown();
}

function terminalEvent(v, ev) {
  const t = ev.terminal;
  if (!t) return;
  let r = t.toolCallId ? findRow(v, t.toolCallId, 0, true) : null;
  if (!r) {
    for (let i = v.rows.length - 1; i >= 0 && !r; i--) {
      if ((v.rows[i].tool.content || []).some((c) => c.type === "terminal" && c.terminalId === t.id)) r = v.rows[i];
    }
  }
  if (!r) {
    // A fast command's output can come before the tool call that names
    // its terminal: hold it for that row.
    const held = v.termHeld.get(t.id) || { output: "", exit: null };
    addOutput(held, t);
    v.termHeld.set(t.id, held);
    return;
  }
  addOutput(r, t);
  renderTool(r);
  scrollDown();
}

// addOutput adds a terminal event (or held output) to a row: the last
// 64 KiB, as SessionView keeps.
function addOutput(r, t) {
  const data = t.data !== undefined ? t.data : t.output;
  r.output = t.reset ? (data || "") : r.output + (data || "");
  if (r.output.length > 65536) r.output = r.output.slice(-65536);
  if (t.exit) r.exit = t.exit;
}

function renderTool(r) {
  const t = r.tool;
  const status = t.status || "pending";
  const parts = [el("div", { class: "head" },
    el("span", { class: "st " + status, "data-status": status }, status.replace("_", " ")),
    el("span", { class: "ttl" }, t.title || t.name || t.id),
    t.kind ? el("span", { class: "kind" }, t.kind) : null)];
  const locs = (t.locations || []).map((l) => l.path + (l.line ? ":" + l.line : ""));
  if (locs.length) parts.push(el("div", { class: "loc" }, locs.join("  ")));
  for (const c of t.content || []) {
    if (c.type === "diff") parts.push(diffView(c));
    else if (c.type === "content" && c.content && c.content.text) parts.push(el("pre", {}, c.content.text));
  }
  if (r.output) parts.push(el("pre", { class: "out" }, r.output));
  if (r.exit) {
    const code = r.exit.exitCode;
    const bad = (code !== undefined && code !== null && code !== 0) || r.exit.signal;
    parts.push(el("div", { class: "exit" + (bad ? " bad" : "") }, r.exit.signal ? "killed by " + r.exit.signal : "exit status " + code));
  }
  r.node.dataset.tool = t.id;
  r.node.dataset.status = status;
  r.node.replaceChildren(...parts);
}

// diffView shows a diff content item as lines removed and added: the old
// text's lines not kept in the new one, then the new lines, around their
// common start and end.
function diffView(c) {
  // A text that ends with a newline has no last line after it.
  const lines = (t) => (t === "" ? [] : t.replace(/\n$/, "").split("\n"));
  const oldLines = c.oldText === undefined || c.oldText === null ? [] : lines(c.oldText);
  const newLines = lines(c.newText || "");
  let pre = 0;
  while (pre < oldLines.length && pre < newLines.length && oldLines[pre] === newLines[pre]) pre++;
  let post = 0;
  while (post < oldLines.length - pre && post < newLines.length - pre &&
    oldLines[oldLines.length - 1 - post] === newLines[newLines.length - 1 - post]) post++;
  const rows = [];
  const ctx = (l) => rows.push(el("div", { class: "l" }, "  " + l));
  oldLines.slice(Math.max(0, pre - 2), pre).forEach(ctx);
  oldLines.slice(pre, oldLines.length - post).forEach((l) => rows.push(el("div", { class: "l del" }, "- " + l)));
  newLines.slice(pre, newLines.length - post).forEach((l) => rows.push(el("div", { class: "l add" }, "+ " + l)));
  oldLines.slice(oldLines.length - post, oldLines.length - post + 2).forEach(ctx);
  const label = (c.oldText === undefined || c.oldText === null ? "new file " : "") + (c.path || "");
  return el("div", { class: "diff" }, el("div", { class: "path" }, label), rows);
}

const kindText = { allow_once: "allow once", allow_always: "always allow", reject_once: "reject once", reject_always: "always reject" };

// permissionChoices names the two buttons after the agent's own one-time
// options (their kinds in the tooltip), and says in a note only what the
// buttons do not: a missing one-time reject, and the "always" options,
// which are never chosen from here, by design.
function permissionChoices(options) {
  const first = (kind) => (options || []).find((o) => o.kind === kind);
  const allow = first("allow_once"), reject = first("reject_once");
  const notes = [];
  if (!reject) notes.push("Reject cancels the request: the agent offered no one-time reject.");
  const always = (options || []).filter((o) => o.kind === "allow_always" || o.kind === "reject_always");
  if (always.length) notes.push("Not offered here: " + always.map((o) => `“${o.name}” (${kindText[o.kind]})`).join(", ") + ".");
  return {
    allow: { text: (allow && allow.name) || "Allow", title: allow ? `${kindText.allow_once} (${allow.optionId})` : "allow once" },
    reject: { text: (reject && reject.name) || "Reject", title: reject ? `${kindText.reject_once} (${reject.optionId})` : "cancels the request" },
    note: notes.join(" "),
  };
}

function permissionCard(v, ev) {
  const p = ev.permission;
  if (!p) return;
  const title = (p.tool && (p.tool.title || p.tool.id)) || "a tool";
  const c = permissionChoices(p.options);
  const allow = el("button", { type: "button", class: "primary", "data-answer": "allow", title: c.allow.title }, c.allow.text);
  const reject = el("button", { type: "button", class: "danger", "data-answer": "reject", title: c.reject.title }, c.reject.text);
  const card = el("div", { class: "card", "data-request": p.id, "data-type": "permission" },
    el("h4", {}, "The agent asks to run: " + title),
    c.note ? el("div", { class: "note" }, c.note) : null,
    el("div", { class: "actions" }, allow, reject));
  const answer = async (a) => {
    allow.disabled = reject.disabled = true;
    try { await call("permission", { id: p.id, answer: a }); } catch (err) {
      notice("Answering the permission request: " + err.message, "error");
      allow.disabled = reject.disabled = false;
    }
  };
  allow.onclick = () => answer("allow");
  reject.onclick = () => answer("reject");
  v.cards.set(p.id, card);
  add(v, card, ev);
  // No focus moves to Allow: a key pressed for something else (the Enter
  // that sent the prompt) must never answer a permission request.
}

function elicitationCard(v, ev) {
  const q = ev.elicitation;
  if (!q) return;
  const fields = [];
  const actions = el("div", { class: "actions" });
  const card = el("div", { class: "card", "data-request": q.id, "data-type": "elicitation" }, el("h4", {}, q.message || "The agent asks"));
  if (q.mode === "url" && q.url) {
    card.append(el("p", {}, link(q.url, q.url)));
  }
  const props = (q.schema && q.schema.properties) || {};
  for (const [name, s] of Object.entries(props)) {
    let input;
    if (s.enum) input = el("select", { name }, s.enum.map((o) => el("option", { value: o }, o)));
    else if (s.type === "boolean") input = el("input", { type: "checkbox", name });
    else input = el("input", { type: s.type === "number" || s.type === "integer" ? "number" : "text", name });
    fields.push({ name, s, input });
    card.append(el("label", {}, (s.title || name) + (s.description ? " — " + s.description : ""), input));
  }
  const send = async (action) => {
    const content = {};
    for (const f of fields) {
      if (f.s.type === "boolean") content[f.name] = f.input.checked;
      else if (f.s.type === "number" || f.s.type === "integer") content[f.name] = Number(f.input.value);
      else content[f.name] = f.input.value;
    }
    for (const b of actions.querySelectorAll("button")) b.disabled = true;
    try { await call("elicitation", { id: q.id, action, content: action === "accept" ? content : undefined }); } catch (err) {
      notice("Answering the question: " + err.message, "error");
      for (const b of actions.querySelectorAll("button")) b.disabled = false;
    }
  };
  actions.append(
    el("button", { type: "button", class: "primary", onclick: () => send("accept") }, q.mode === "url" ? "Done" : "Answer"),
    el("button", { type: "button", onclick: () => send("decline") }, "Decline"),
    el("button", { type: "button", onclick: () => send("cancel") }, "Cancel"));
  card.append(actions);
  v.cards.set(q.id, card);
  add(v, card, ev);
}

// authCard is a sign-in request: the methods the bridge can carry out, an
// env_var method's variables as fields (their values go to the agent's
// environment only).
function authCard(ev, v) {
  const a = ev.auth;
  const card = el("div", { class: "card", "data-request": a.id, "data-type": "auth" },
    el("h4", {}, `Agent ${ev.bridge} needs a sign-in`), a.message ? el("p", {}, a.message) : null,
    // Its minimal environment left out a key this server has: the likely
    // cause, and a fix that needs no typing of secrets here.
    a.withheld && a.withheld.length ? el("p", { class: "withheld" }, `The agent did not get ${a.withheld.join(", ")} from webui's environment: restart webui with ` +
      a.withheld.map((n) => "--env " + n).join(" ") + ", or sign in here.") : null);
  const methods = a.methods || [];
  if (!methods.length) card.append(el("p", {}, "It offered no way to sign in from here: sign in with the agent's own tool, then start the session again."));
  for (const m of methods) {
    const inputs = (m.vars || []).map((x) => ({ x, input: el("input", { type: x.secret ? "password" : "text", name: x.name, autocomplete: "off" }) }));
    const box = el("div", {}, el("strong", {}, m.name), m.description ? " — " + m.description : "",
      m.link ? [" ", link(m.link, "get a key")] : "",
      inputs.map((i) => el("label", {}, i.x.name, i.input)));
    box.append(el("div", { class: "actions" }, el("button", { type: "button", class: "primary", onclick: async () => {
      const env = {};
      for (const i of inputs) env[i.x.name] = i.input.value;
      await attempt(() => api("/api/auth", { agent: ev.bridge, id: a.id, method: m.id, env: inputs.length ? env : undefined }));
    } }, "Sign in with " + m.name)));
    card.append(box);
  }
  card.append(el("div", { class: "actions" }, el("button", { type: "button", onclick: () => attempt(() => api("/api/auth", { agent: ev.bridge, id: a.id, decline: true })) }, "Decline")));
  return card;
}

const settledText = { app: "by you", policy: "by the host's policy", host: "by the host" };

function decided(v, ev) {
  const d = ev.decision;
  if (!d) return;
  const card = v.cards.get(d.request);
  if (!card) return line(v, `${d.type} ${d.request}: ${d.outcome}`, "", ev);
  card.classList.add("settled");
  card.dataset.outcome = d.outcome;
  for (const b of card.querySelectorAll(".actions")) b.remove();
  for (const i of card.querySelectorAll("input, select")) i.disabled = true;
  card.append(el("div", { class: "outcome " + d.outcome, "data-outcome": d.outcome },
    d.outcome.replace("_", " ") + " " + (settledText[d.by] || "by " + d.by) + (d.rule ? ": " + d.rule : "")));
}

// renderPlan shows the plan; once its turn has ended (ended), a step still
// in progress is shown as not finished, not as running.
function renderPlan(ev, ended) {
  const list = $("plan");
  list.replaceChildren();
  const todos = ev.todos && ev.todos.length ? ev.todos : null;
  const items = todos || ev.plan || [];
  if (!items.length) list.append(el("li", { class: "empty" }, "No plan."));
  for (const e of items) {
    const stuck = ended && e.status === "in_progress";
    list.append(el("li", { class: stuck ? "unfinished" : e.status, title: stuck ? "the turn ended before this step was done" : e.status },
      e.content + (stuck ? " (not finished: the turn ended)" : e.status === "in_progress" ? " (in progress)" : "")));
  }
}

function setMeter(u) {
  const m = $("s-meter");
  m.replaceChildren();
  if (!u || !u.known) { m.append("context: unknown"); return; }
  const pct = u.percent || (u.size ? (100 * u.used) / u.size : 0);
  m.append("context:", el("span", { class: "bar", role: "meter", "aria-valuenow": Math.round(pct), "aria-valuemin": 0, "aria-valuemax": 100 },
    el("i", { style: { width: `${Math.min(100, pct)}%` } })),
    `${Math.round(pct)}%` + (u.used && u.size ? ` (${u.used.toLocaleString()} / ${u.size.toLocaleString()})` : "") +
    (u.cost ? " · " + money(u.cost.amount, u.cost.currency) : ""));
}

// money formats an amount the way people read one: cents from a unit up,
// two significant digits below it (a turn can cost 0.000018 USD), never
// the float's noise (0.000017999999999999997).
function money(amount, currency) {
  const n = Number(amount);
  if (!Number.isFinite(n)) return String(amount) + " " + (currency || "");
  const f = Math.abs(n) >= 1 || n === 0
    ? new Intl.NumberFormat("en", { minimumFractionDigits: 2, maximumFractionDigits: 2 })
    : new Intl.NumberFormat("en", { maximumSignificantDigits: 2 });
  return f.format(n) + (currency ? " " + currency : "");
}

function compaction(v, ev) {
  const c = ev.compaction;
  if (!c) return;
  line(v, "Context compaction " + c.status + (c.summary ? ": " + c.summary : c.message ? ": " + c.message : ""), c.status === "failed" ? "error" : "", ev);
  // The window's fill is not known again until the agent reports it.
  if (c.status === "completed") setMeter(null);
}

function setSafety(a) {
  const s = $("s-safety");
  const state = (a && a.state) || "unknown";
  s.className = "safety " + state;
  const parts = ["safety: ", el("b", {}, state), a && a.reason ? " — " + a.reason : ""];
  // An agent that acts unasked and cannot be moved runs in Build only with
  // the user's consent, asked here once per session.
  if (a && a.consentNeeded) parts.push(" ", el("button", { type: "button", id: "s-consent", onclick: () => consent(a) }, "Let it act on its own…"));
  else if (a && a.blocked) parts.push(" (prompts refused)");
  s.replaceChildren(...parts);
  s.dataset.state = state;
  s.dataset.consent = a && a.consentNeeded ? "needed" : "";
}

async function consent(a) {
  const q = "This agent acts without asking: " + (a.reason || a.state) +
    ".\n\nBuild mode cannot review its edits and commands. Let it act on its own for this session?";
  if (!window.confirm(q)) return;
  await attempt(() => call("consent"));
}

function sessionReady(v, ev) {
  const r = ev.sessionReady || {};
  // A session that has just opened runs no turn, whatever its history
  // shows of one a crash cut short.
  v.open = true;
  v.busy = false;
  if (r.agentModes) { v.agentModes = r.agentModes; renderAgentModes(v); }
  renderConfig(r.configOptions);
  if (r.models) renderModels(r.models);
  let text = r.resumed ? "Session resumed." : "Session started.";
  if (r.replaced) text = `The agent could not resume its session ${r.replaced} (${r.reason || "unknown reason"}${r.resumeError ? ": " + r.resumeError : ""}); it started a new one. The history above is from the journal.`;
  else if (r.resumeError) text = "The agent could not resume the session: " + r.resumeError + ". It started a new one.";
  line(v, text, r.replaced || r.resumeError ? "error" : "ok", ev);
  refreshSoon();
}

function renderAgentModes(v) {
  const m = v.agentModes;
  const sel = $("s-agentmode");
  $("s-agentmode-l").hidden = !m || !(m.availableModes || []).length;
  if (!m) return;
  sel.replaceChildren(...(m.availableModes || []).map((x) => el("option", { value: x.id, title: x.description || "" }, x.name || x.id)));
  sel.value = m.currentModeId;
}

function setAgentMode(v, id) {
  if (v.agentModes) { v.agentModes = { ...v.agentModes, currentModeId: id }; renderAgentModes(v); }
}

// hasAgentModes says whether the Agent mode menu is shown: the agent's
// "mode" config option, which mirrors the same choice, is then left out
// (one control for one thing).
function hasAgentModes(v) {
  return !!(v && v.agentModes && (v.agentModes.availableModes || []).length);
}

function renderConfig(options) {
  const v = app.current;
  if (v) v.configOptions = options || [];
  const box = $("s-config");
  box.replaceChildren();
  for (const o of options || []) {
    if (o.category === "mode" && hasAgentModes(v)) continue;
    // A refused change shows the value the agent still has.
    const change = async (body, undo) => {
      try { await call("config", body); } catch (err) { undo(); notice(err.message, "error"); }
    };
    if (o.type === "boolean" && typeof o.currentValue === "boolean") { // a value of another type is the agent's mistake: no toggle
      const input = el("input", { type: "checkbox", "data-config": o.id });
      input.checked = !!o.currentValue;
      input.onchange = () => change({ id: o.id, bool: input.checked }, () => { input.checked = !!o.currentValue; });
      box.append(el("label", { title: o.description || "" }, o.name, input));
    } else if (o.type === "select") {
      const flat = [];
      for (const x of o.options || []) (x.options ? x.options : [x]).forEach((y) => flat.push(y));
      const sel = el("select", { "data-config": o.id }, flat.map((x) => el("option", { value: x.value }, x.name || x.value)));
      sel.value = o.currentValue;
      sel.onchange = () => change({ id: o.id, value: sel.value }, () => { sel.value = o.currentValue; });
      box.append(el("label", { title: o.description || "" }, o.name, sel));
    }
  }
}

function renderModels(m) {
  if (!m || $("s-config").querySelector("[data-config]")) return;
  const cur = (m.availableModels || []).find((x) => x.modelId === m.currentModelId);
  $("s-config").append(el("span", { class: "badge" }, "model: " + (cur ? cur.name : m.currentModelId)));
}

function renderCommands(cmds) {
  const box = $("commands");
  box.replaceChildren();
  // append takes nodes, not an array of them (an array shows as text).
  if (cmds && cmds.length) box.append(el("h3", {}, "Commands"), ...cmds.map((c) => el("div", { title: c.description || "" }, "/" + c.name)));
}

function extEvent(v, ev) {
  const { pos, bridge, key, session, seq, turn, time, ...rest } = ev;
  add(v, el("details", { class: "ext" }, el("summary", {}, ev.kind + (ev.method ? " " + ev.method : "")),
    el("pre", { class: "json" }, JSON.stringify(rest, null, 2))), ev);
}

// ---- controls ----

$("composer").addEventListener("submit", async (e) => {
  e.preventDefault();
  const v = app.current;
  const text = $("prompt").value.trim();
  // While a turn runs, what is sent is queued (turns.js).
  if (v && v.open && v.busy) return enqueue();
  if (!v || !text || $("send").disabled) return;
  // Sending holds the composer until the turn's start (or end) arrives on
  // the stream, which may come before this call's answer does; a turn
  // that never starts (its agent could not) frees it after a while.
  v.sending = true;
  renderCurrentBadges();
  clearTimeout(v.sendingTimer);
  v.sendingTimer = setTimeout(() => { v.sending = false; renderCurrentBadges(); }, 15000);
  try {
    await call("prompt", { text });
    $("prompt").value = "";
  } catch (err) {
    notice("Sending the prompt: " + err.message, "error");
    v.sending = false;
    renderCurrentBadges();
  }
});
$("prompt").addEventListener("keydown", (e) => {
  if (e.key === "Enter" && !e.shiftKey && !e.isComposing) { e.preventDefault(); $("composer").requestSubmit(); }
});
$("cancel").addEventListener("click", () => attempt(() => call("cancel")));
$("s-mode").addEventListener("change", async () => {
  const v = app.current;
  v.modeChanging = true;
  v.stateSeq = (v.stateSeq || 0) + 1; // answers already on their way are stale
  try {
    const p = await call("policy", { mode: $("s-mode").value });
    $("s-mode").value = p.mode;
  } catch (err) {
    // The menu goes back to the mode the session has.
    if (v.info) $("s-mode").value = v.info.policy.mode;
    notice("Setting the host mode: " + err.message, "error");
  } finally {
    v.modeChanging = false;
    attempt(loadState);
  }
});
$("s-agentmode").addEventListener("change", async () => {
  const v = app.current;
  try {
    const r = await call("agent-mode", { mode: $("s-agentmode").value });
    if (app.current === v && r.agentMode) setAgentMode(v, r.agentMode);
  } catch (err) {
    // Refused (by the host or the agent): the menu shows the mode the
    // session still has, not the one asked for.
    if (app.current === v) renderAgentModes(v);
    notice("Setting the agent mode: " + err.message, "error");
  }
});
$("s-compact").addEventListener("click", () => attempt(() => call("compact")));
$("s-close").addEventListener("click", async () => { await attempt(() => call("close")); attempt(loadState); });

// ---- the inspector: wire trace, stderr, initialize exchange ----

const inspector = {
  agent: "", tab: "wire", timer: 0,
  open(agent) {
    if (this.agent !== agent) this.opened.clear();
    this.agent = agent;
    $("inspector").hidden = false;
    document.body.classList.add("inspecting");
    $("insp-title").textContent = "Inspector: " + agent;
    this.refresh();
    $("insp-close").focus();
  },
  close() { $("inspector").hidden = true; document.body.classList.remove("inspecting"); clearTimeout(this.timer); this.agent = ""; },
  async refresh() {
    clearTimeout(this.timer);
    if (!this.agent) return;
    try {
      const data = await api("/api/agents/" + encodeURIComponent(this.agent) + "/inspector");
      this.render(data);
    } catch (err) {
      $("insp-body").replaceChildren(el("p", { class: "line error" }, err.message));
    }
    this.timer = setTimeout(() => this.refresh(), 1500);
  },
  // open holds the wire rows a person unfolded, so that a refresh keeps
  // them open.
  opened: new Set(),
  // wireRow is one message: folded to its direction, method or id, and
  // size; unfolded, the message pretty-printed (a line cut short by the
  // trace's limit is shown as it is).
  wireRow(l) {
    const rowKey = l.time + "|" + l.dir + "|" + l.size;
    let msg = null;
    try { msg = JSON.parse(l.line); } catch { /* cut short, or not JSON */ }
    let what = "";
    if (msg && typeof msg === "object") {
      const id = msg.id !== undefined && msg.id !== null ? " #" + msg.id : "";
      if (msg.method) what = msg.method + id + (msg.method === "session/update" && msg.params && msg.params.update ? " " + msg.params.update.sessionUpdate : "");
      else if (msg.error) what = "error" + id + ": " + (msg.error.message || msg.error.code);
      else what = "result" + id;
    } else {
      what = l.line.slice(0, 80);
    }
    const row = el("details", { class: "wire " + l.dir, "data-key": rowKey, open: this.opened.has(rowKey) },
      el("summary", {}, el("span", { class: "dir" }, l.dir === "out" ? "→ " : "← "), what,
        el("span", { class: "size" }, " " + (l.size || l.line.length) + " bytes" + (l.truncated ? ", cut short" : ""))),
      el("pre", { class: "json" }, msg ? JSON.stringify(msg, null, 2) : l.line + (l.truncated ? " …" : "")));
    row.addEventListener("toggle", () => { if (row.open) this.opened.add(rowKey); else this.opened.delete(rowKey); });
    return row;
  },
  render(d) {
    const body = $("insp-body");
    const atEnd = body.scrollHeight - body.scrollTop - body.clientHeight < 40;
    const rows = [];
    if (this.tab === "wire") {
      if (!d.trace.length) rows.push(el("p", { class: "empty" }, "No wire traffic yet."));
      for (const l of d.trace) rows.push(this.wireRow(l));
    } else if (this.tab === "stderr") {
      if (!d.stderr.length) rows.push(el("p", { class: "empty" }, "Nothing on stderr (an in-process agent, such as the demo, has none)."));
      rows.push(el("pre", { class: "json" }, d.stderr.join("\n")));
    } else if (this.tab === "init") {
      rows.push(el("h3", {}, "initialize request (→)"), el("pre", { class: "json" }, pretty(d.initializeRequest) || "not sent yet"));
      rows.push(el("h3", {}, "initialize answer (←): capabilities, auth methods"), el("pre", { class: "json" },
        pretty(d.initializeAnswer) || (d.initialize ? JSON.stringify(d.initialize, null, 2) : "no agent process runs")));
    } else {
      if (!d.logs.length) rows.push(el("p", { class: "empty" }, "No diagnostics."));
      rows.push(el("pre", { class: "json" }, d.logs.join("\n")));
    }
    body.replaceChildren(...rows);
    if (atEnd && this.tab !== "init") body.scrollTop = body.scrollHeight;
  },
};

function pretty(s) {
  if (!s) return "";
  try { return JSON.stringify(JSON.parse(s), null, 2); } catch { return s; }
}

$("insp-close").addEventListener("click", () => inspector.close());
for (const b of document.querySelectorAll(".tabs button")) {
  b.addEventListener("click", () => {
    for (const x of document.querySelectorAll(".tabs button")) x.setAttribute("aria-selected", x === b ? "true" : "false");
    inspector.tab = b.dataset.tab;
    inspector.refresh();
  });
}
document.addEventListener("keydown", (e) => { if (e.key === "Escape" && !$("inspector").hidden) inspector.close(); });

// ---- start ----

window.addEventListener("hashchange", () => {
  const m = location.hash.match(/session=([^&]+)/);
  if (m && (!app.current || app.current.key !== decodeURIComponent(m[1]))) openView(decodeURIComponent(m[1]));
});

(async function start() {
  // The token now travels in the page's cookie: keep it out of the address
  // bar, where a screen share or a copied link would show it.
  if (new URLSearchParams(location.search).has("token")) history.replaceState(null, "", location.pathname + location.hash);
  connectGlobal();
  await attempt(loadAgents);
  await attempt(loadSessions);
  const m = location.hash.match(/session=([^&]+)/);
  if (m) openView(decodeURIComponent(m[1]));
})();
