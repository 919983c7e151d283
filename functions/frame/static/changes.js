// Changes: the document's history, a diff between two versions, blame, and a revision a model call was given.
import { api } from "./api.js";
import { blame, diffLines, lines } from "./diff.js";
import { $, action, cell, diffInto, empty, say, showView, state, when } from "./ui.js";

export function resetChanges() {
  for (const id of ["history", "blame"]) $(id).tBodies[0].replaceChildren();
  for (const id of ["history", "blame"]) {
    $(id).hidden = true;
    $(`${id}-empty`).hidden = true;
  }
  $("diff").replaceChildren();
  $("diff-box").hidden = true;
  $("revision").hidden = true;
}

async function loadHistory() {
  const { versions } = await api.versions(state.ws);
  const body = $("history").tBodies[0];
  body.replaceChildren();
  for (const v of versions) {
    const row = body.insertRow();
    cell(row, String(v.version));
    cell(row, v.purgedAt ? `${v.op} (purged)` : v.restoredFrom ? `undo of ${v.restoredFrom}` : v.op);
    cell(row, v.author);
    cell(row, v.turnId || "—", "id");
    cell(row, when(v.createdAt)).title = v.createdAt;
    cell(row, String(v.bytes));
  }
  empty("history", versions.length);
  say(`${versions.length} versions.`);
  return versions;
}

async function showDiff() {
  const from = Number($("diff-from").value);
  const to = Number($("diff-to").value);
  const [a, b] = await Promise.all([api.version(state.ws, from), api.version(state.ws, to)]);
  diffInto($("diff"), diffLines(lines(a.content), lines(b.content)));
  $("diff-box").hidden = false;
  say(`Diff from version ${from} to version ${to}.`);
}

async function showBlame() {
  const target = Number($("blame-version").value);
  const { versions } = await api.versions(state.ws);
  const chain = [];
  for (const v of versions.filter((x) => x.version <= target && !x.purgedAt).reverse()) {
    const { content } = await api.version(state.ws, v.version);
    chain.push({ ...v, text: content });
  }
  const body = $("blame").tBodies[0];
  body.replaceChildren();
  const blamed = blame(chain);
  for (const { line, number, origin } of blamed) {
    const row = body.insertRow();
    cell(row, String(number));
    cell(row, `v${origin.version}`);
    cell(row, origin.author);
    cell(row, origin.turnId || "—", "id");
    cell(row, line, "text");
  }
  empty("blame", blamed.length);
  say(`Blame of version ${target}.`);
}

export async function openRevision(n) {
  const v = await api.version(state.ws, n);
  $("revision-number").textContent = String(n);
  $("revision-text").textContent = v.content;
  $("revision").hidden = false;
  showView("changes");
  $("revision").scrollIntoView();
  say(`Revision ${n}, as that model call was given it.`);
}

export function wireChanges() {
  $("history-load").addEventListener("click", action(loadHistory));
  $("diff-form").addEventListener("submit", action(showDiff));
  $("blame-form").addEventListener("submit", action(showBlame));
}
