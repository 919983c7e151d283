// Memory entries (docs/architecture.md#entries): list, open, history, create, supersede on the revision shown,
// forget after a confirm step (the agents' candidates are in the review inbox, inbox.js). Stored text only ever
// goes into the page as text (textContent, value): never as HTML, so a title like `<img onerror=…>` stays a title.
import { ApiError, api } from "./api.js";
import { hideBudgets, showBudgets, showHidden } from "./entry-budgets.js";
import * as helpers from "./ui.js";

const { $, button, empty } = helpers;
const state = { ws: null, canWrite: false, role: null, filters: {}, cursor: null, entry: null, hidden: 0 };
const ui = helpers;

const warned = (written) =>
  written.warnings && written.warnings.length
    ? ` Warning: it holds ${written.warnings.map((w) => `${w.kind} ×${w.count}`).join(", ")} (stored as you typed it).`
    : "";

/** Empties every entries view (another workspace, another sign-in). */
export function hideEntries() {
  Object.assign(state, { ws: null, canWrite: false, role: null, filters: {}, cursor: null, entry: null, hidden: 0 });
  hideBudgets();
  for (const id of ["entry-list", "entry-history"]) $(id).tBodies[0].replaceChildren();
  for (const id of ["entry", "entries-more", "entries-note", "entry-list", "entry-list-empty"]) $(id).hidden = true;
  for (const id of ["entry-title", "entry-summary", "entry-body", "entries-note"]) $(id).textContent = "";
  $("entry-citations").replaceChildren();
  for (const form of ["entries-filter", "entry-create", "supersede-form", "entry-open-form"]) $(form).reset();
}

/** The workspace's entries, as this person may see them, on opening it. */
export async function showEntries(ws, view) {
  hideEntries();
  state.ws = ws;
  state.canWrite = view.canWrite;
  state.role = view.role;
  if (!view.canWrite) {
    $("entries-note").textContent =
      `You can write only your own private (member) entries here: your role is ${view.role} in a ` +
      `${view.shareType} workspace.`;
    $("entries-note").hidden = false;
    $("new-scope").value = "member";
  }
  await listEntries();
}

export async function listEntries(more = false) {
  const cursor = more ? state.cursor : undefined;
  const { entries, nextCursor, hidden, budgets } = await api.entries(state.ws, { ...state.filters, cursor });
  const body = $("entry-list").tBodies[0];
  if (!more) body.replaceChildren();
  if (!more) showBudgets(budgets);
  state.hidden = (more ? state.hidden : 0) + (hidden || 0);
  showHidden(state.hidden);
  for (const e of entries) {
    const row = body.insertRow();
    row.dataset.entryId = e.entryId;
    for (const text of [e.title, e.summary, e.type, e.scope, String(e.revision), e.author]) ui.cell(row, text);
    row.insertCell().append(button("Open", () => openEntry(e.entryId)));
  }
  state.cursor = nextCursor;
  $("entries-more").hidden = !nextCursor;
  empty("entry-list", body.rows.length);
  return entries;
}

function showEntry(entry, { keepDraft = false } = {}) {
  state.entry = entry;
  $("entry-title").textContent = entry.title;
  $("entry-id").textContent = entry.entryId;
  $("entry-status").textContent = entry.status;
  $("entry-revision").textContent = String(entry.revision);
  $("entry-valid").textContent = entry.validTo ? `${entry.validFrom} to ${entry.validTo}` : entry.validFrom;
  $("entry-kind").textContent = `${entry.type}, ${entry.scope}${entry.key ? `, key ${entry.key}` : ""}`;
  $("entry-author").textContent = `${entry.author} (${entry.authorKind})`;
  $("entry-summary").textContent = entry.summary;
  $("entry-body").textContent = entry.body; // Markdown shown as it is stored, never rendered
  const citations = entry.citations.map((c) => {
    const li = document.createElement("li");
    li.textContent = `${c.kind} ${c.ref}${c.locator ? ` (${c.locator})` : ""}: ${c.state}`;
    li.className = `citation-${c.state}`;
    return li;
  });
  if (!citations.length) citations.push(Object.assign(document.createElement("li"), { textContent: "No citations." }));
  $("entry-citations").replaceChildren(...citations);
  // Member entries listed are the caller's own (any role may change them); the others need write right.
  const writable = state.canWrite || entry.scope === "member";
  for (const id of ["entry-edit", "entry-forget", "forget-yes"]) $(id).disabled = !writable;
  $("supersede-base").textContent = String(entry.revision);
  $("entry-history").hidden = true;
  $("entry-history").tBodies[0].replaceChildren();
  $("forget-confirm").hidden = true;
  $("entry-stale").hidden = true;
  if (!keepDraft) $("supersede-form").hidden = true;
  $("entry").hidden = false;
}

async function openEntry(entryId) {
  const entry = await api.entry(state.ws, entryId);
  showEntry(entry);
  $("entry").scrollIntoView();
  ui.say(`Entry ${entry.entryId}, revision ${entry.revision}.`);
}

async function loadHistory() {
  const { entries } = await api.entryHistory(state.ws, state.entry.entryId);
  const body = $("entry-history").tBodies[0];
  body.replaceChildren();
  for (const r of entries) {
    const row = body.insertRow();
    const texts = [String(r.revision), r.status, r.title, r.validFrom, r.validTo, r.author, r.supersededReason];
    for (const text of texts) ui.cell(row, text || "—");
  }
  $("entry-history").hidden = false;
  ui.say(`${entries.length} revisions of entry ${state.entry.entryId}.`);
}

function startSupersede() {
  const e = state.entry;
  $("sup-type").value = e.type;
  $("sup-title").value = e.title;
  $("sup-summary").value = e.summary;
  $("sup-body").value = e.body;
  $("sup-reason").value = "";
  $("supersede-form").hidden = false;
  $("sup-title").focus();
}

/** A new revision on the revision shown (`X-Base-Revision`). A stale one reloads the entry and keeps the draft. */
async function supersede() {
  const { entryId, revision } = state.entry;
  const body = {
    type: $("sup-type").value,
    title: $("sup-title").value,
    summary: $("sup-summary").value,
    body: $("sup-body").value,
  };
  if ($("sup-reason").value.trim()) body.reason = $("sup-reason").value.trim();
  let written;
  try {
    written = await api.supersedeEntry(state.ws, entryId, body, revision);
  } catch (error) {
    if (error instanceof ApiError && error.code === "STALE_REVISION") {
      const current = await api.entry(state.ws, entryId);
      showEntry(current, { keepDraft: true });
      $("entry-stale-text").textContent =
        `Your edit was made on revision ${revision}, but revision ${current.revision} is current now (shown ` +
        "above). Nothing was saved and nothing was overwritten. Your text is still in the form: compare, " +
        `then save it as the next revision after ${current.revision}, or cancel.`;
      $("entry-stale").hidden = false;
    }
    throw error;
  }
  showEntry(await api.entry(state.ws, entryId));
  await listEntries();
  ui.say(`Superseded: entry ${entryId} is at revision ${written.revision}.${warned(written)}`);
}

async function forget() {
  const { entryId } = state.entry;
  await api.forgetEntry(state.ws, entryId);
  state.entry = null;
  $("entry").hidden = true;
  await listEntries();
  ui.say(`Entry ${entryId} forgotten: every revision deleted.`);
}

async function create() {
  const body = {
    scope: $("new-scope").value,
    type: $("new-type").value,
    title: $("new-title").value,
    summary: $("new-summary").value,
    body: $("new-body").value,
  };
  if ($("new-key").value.trim()) body.key = $("new-key").value.trim();
  const written = await api.createEntry(state.ws, body);
  for (const id of ["new-key", "new-title", "new-summary", "new-body"]) $(id).value = "";
  await listEntries();
  await openEntry(written.entryId);
  const what = written.superseded
    ? `Key in use: entry ${written.entryId} superseded, now revision ${written.revision}.`
    : `Created entry ${written.entryId} (revision ${written.revision}).`;
  ui.say(`${what}${warned(written)}`);
}

export function wireEntries() {
  const { action } = helpers;
  $("entries-filter").addEventListener(
    "submit",
    action(async () => {
      state.filters = { scope: $("entries-scope").value, type: $("entries-type").value };
      const listed = await listEntries();
      ui.say(`${listed.length}${state.cursor ? "+" : ""} entries.`);
    }),
  );
  $("entries-more").addEventListener("click", action(() => listEntries(true)));
  $("entry-open-form").addEventListener("submit", action(() => openEntry($("entry-open-id").value.trim())));
  $("entry-history-load").addEventListener("click", action(loadHistory));
  $("entry-edit").addEventListener("click", startSupersede);
  $("supersede-cancel").addEventListener("click", () => {
    $("supersede-form").hidden = true;
    $("entry-stale").hidden = true;
  });
  $("supersede-form").addEventListener("submit", action(supersede));
  $("entry-forget").addEventListener("click", () => {
    $("forget-confirm").hidden = false;
    $("forget-no").focus();
  });
  $("forget-no").addEventListener("click", () => ($("forget-confirm").hidden = true));
  $("forget-yes").addEventListener("click", action(forget));
  $("entry-create").addEventListener("submit", action(create));
}
