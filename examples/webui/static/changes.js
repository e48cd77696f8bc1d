// The Changes panel: under each turn, the files it changed in the
// workspace (from its changes event), each one's diff on a click, and
// the ways back: Restore (the whole workspace to before the turn) and a
// Revert per file. A restore that would overwrite what changed since the
// last turn ended lists those files and offers to go ahead anyway.
// Loaded after app.js, whose helpers (el, $, api, call, add, line,
// notice, app) it uses; app.js calls changesEvent for each changes event.
// Agent data (paths, diff lines) goes into text nodes only.
"use strict";

function changesEvent(v, ev) {
  const c = ev.changes || {};
  // A fork's history reads through its parent's, whose workspace record
  // is not the fork's to restore.
  if (ev.key && ev.key !== v.key) return;
  if (c.op === "turn") return changesPanel(v, ev);
  if (c.op === "restore") {
    const n = (c.files || []).length;
    return line(v, "Restored: the workspace is as before turn " + c.restored + " (" + n + " file" + (n === 1 ? "" : "s") + " set back).", "restored", ev);
  }
  // "write" events: the turn's own event lists the file.
}

const statusName = { A: "added", M: "modified", D: "deleted", R: "renamed" };

function changesPanel(v, ev) {
  const c = ev.changes;
  const files = c.files || [];
  const skipped = c.skipped || [];
  if (!files.length && !skipped.length) return;
  const turn = ev.turn;
  const conflict = el("div", { class: "ch-conflict banner error", hidden: true });
  const list = el("ul", { class: "ch-files" }, files.map((f) => fileRow(v, turn, f, conflict)));
  const panel = el("section", { class: "changes", "data-turn": turn, "aria-label": "Changes of turn " + turn },
    el("div", { class: "ch-head" },
      el("h4", {}, "Changes · " + files.length + " file" + (files.length === 1 ? "" : "s")),
      el("span", { class: "spacer" }),
      files.length ? el("button", { type: "button", class: "ch-restore", title: "Restore the workspace to before this turn",
        onclick: () => restoreTurn(v, { turn }, conflict, "Restore anyway") }, "Restore") : null),
    list, conflict,
    skipped.length ? el("details", { class: "ch-skipped" }, el("summary", {}, "Not recorded: " + skipped.length + " file" + (skipped.length === 1 ? "" : "s")),
      el("ul", {}, skipped.map((s) => el("li", {}, el("span", { class: "ch-path" }, s.path), " (" + s.reason + ")")))) : null);
  add(v, panel, ev);
}

function fileRow(v, turn, f, conflict) {
  const diff = el("div", { class: "ch-diff", hidden: true });
  const counts = f.binary ? el("span", { class: "ch-bin" }, "binary")
    : [el("span", { class: "ch-add" }, "+" + f.added), " ", el("span", { class: "ch-del" }, "−" + f.removed)];
  const toggle = el("button", { type: "button", class: "ch-file", "aria-expanded": "false", title: "Show what the turn changed in this file",
    onclick: () => showDiff(v, turn, f.path, toggle, diff) },
    el("span", { class: "ch-status s-" + f.status, title: statusName[f.status] || f.status }, f.status), " ",
    el("span", { class: "ch-path" }, f.oldPath ? f.oldPath + " → " + f.path : f.path), " ", counts);
  return el("li", { "data-path": f.path },
    el("div", { class: "ch-row" }, toggle,
      el("button", { type: "button", class: "ch-revert", title: "Set this file back to before this turn",
        onclick: () => restoreTurn(v, { turn, path: f.path }, conflict, "Revert anyway") }, "Revert")),
    diff);
}

async function showDiff(v, turn, path, toggle, box) {
  if (!box.hidden) { box.hidden = true; toggle.setAttribute("aria-expanded", "false"); return; }
  toggle.setAttribute("aria-expanded", "true");
  box.hidden = false;
  box.replaceChildren(el("span", { class: "empty" }, "Loading the diff…"));
  try {
    const r = await api("/api/sessions/" + encodeURIComponent(v.key) + "/diff?turn=" + turn + "&path=" + encodeURIComponent(path));
    box.replaceChildren(renderDiff(r.diff || ""));
  } catch (err) {
    box.replaceChildren(el("span", { class: "err" }, "The diff: " + err.message));
  }
}

// renderDiff shows a unified diff a line at a time, each classed by what
// it is: a file header, a hunk, a line added, removed or kept.
function renderDiff(text) {
  if (!text) return el("span", { class: "empty" }, "No textual difference.");
  const lines = text.replace(/\n$/, "").split("\n");
  let header = true;
  return el("pre", { class: "diff" }, lines.map((l) => {
    let cls = "d-ctx";
    if (l.startsWith("@@")) { header = false; cls = "d-hunk"; }
    else if (l.startsWith("diff ")) { header = true; cls = "d-meta"; }
    else if (header) cls = "d-meta";
    else if (l.startsWith("+")) cls = "d-add";
    else if (l.startsWith("-")) cls = "d-del";
    else if (l.startsWith("\\")) cls = "d-meta";
    return el("span", { class: "d-line " + cls }, l + "\n");
  }));
}

// restoreTurn restores (body.path: reverts one file); a conflict lists
// the files changed since the last turn ended and offers to force it.
async function restoreTurn(v, body, conflict, forceLabel) {
  const what = body.path ? "revert" : "restore";
  conflict.hidden = true;
  try {
    await api("/api/sessions/" + encodeURIComponent(v.key) + "/" + what, body);
  } catch (err) {
    const conflicts = err.data && err.data.conflicts;
    if (!conflicts) { notice((body.path ? "Reverting " + body.path : "Restoring") + ": " + err.message, "error"); return; }
    conflict.replaceChildren(
      el("span", {}, "These files changed since the last turn ended, and " + (body.path ? "reverting" : "restoring") + " would overwrite them:"),
      el("ul", { class: "ch-conflicts" }, conflicts.map((p) => el("li", { class: "ch-path" }, p))),
      el("button", { type: "button", class: "ch-force danger", onclick: () => restoreTurn(v, { ...body, force: true }, conflict, forceLabel) }, forceLabel),
      el("button", { type: "button", onclick: () => { conflict.hidden = true; } }, "Keep them"));
    conflict.hidden = false;
  }
}
