// Pages (docs/architecture.md#pages): a workspace's pages as this person may read them, one opened with the
// entries filed in it; filing and unfiling are on the revision shown (a stale one is the API's STALE_REVISION).
// Stored text goes into the page as text only (textContent), never as HTML.
import { api } from "./api.js";
import * as ui from "./ui.js";

const { $, button, empty } = ui;
const state = { ws: null, page: null };

const staleness = (stale) => (stale ? "stale" : "up to date");

/** Empties the pages view (another workspace, another sign-in). */
export function hidePages() {
  Object.assign(state, { ws: null, page: null });
  for (const id of ["page-list", "page-entries"]) $(id).tBodies[0].replaceChildren();
  for (const id of ["page", "page-list", "page-list-empty"]) $(id).hidden = true;
  $("page-file-entry").replaceChildren();
}

/** The workspace's pages, on opening it. */
export async function showPages(ws) {
  hidePages();
  state.ws = ws;
  await listPages();
}

async function listPages() {
  const { pages } = await api.pages(state.ws);
  const body = $("page-list").tBodies[0];
  body.replaceChildren();
  for (const p of pages) {
    const row = body.insertRow();
    row.dataset.pageId = p.pageId;
    for (const text of [p.title, p.category, p.scope, String(p.entryCount), staleness(p.summaryStale)]) {
      ui.cell(row, text);
    }
    row.insertCell().append(button("Open", () => openPage(p.pageId)));
  }
  empty("page-list", body.rows.length);
}

async function openPage(pageId) {
  const [page, { entries }] = await Promise.all([api.page(state.ws, pageId), api.entries(state.ws)]);
  state.page = page;
  $("page-title").textContent = page.title;
  $("page-category").textContent = page.category;
  $("page-revision").textContent = String(page.revision);
  $("page-stale").textContent = staleness(page.summaryStale);
  const body = $("page-entries").tBodies[0];
  body.replaceChildren();
  for (const e of page.entries) {
    const row = body.insertRow();
    row.dataset.entryId = e.entryId;
    for (const text of [e.title, e.summary, String(e.revision)]) ui.cell(row, text);
    row.insertCell().append(button("Unfile", () => unfile(e.entryId)));
  }
  empty("page-entries", body.rows.length);
  const held = new Set(page.entries.map((e) => e.entryId));
  const options = entries
    .filter((e) => !held.has(e.entryId))
    .map((e) => Object.assign(ui.element("option", e.title), { value: e.entryId }));
  $("page-file-entry").replaceChildren(...options);
  $("page-file").disabled = options.length === 0;
  $("page").hidden = false;
}

async function fileEntry() {
  const entryId = $("page-file-entry").value;
  if (!entryId) throw new Error("No entry to file: add one in Entries.");
  const written = await api.fileEntry(state.ws, state.page.pageId, entryId, state.page.revision);
  await Promise.all([openPage(written.pageId), listPages()]);
  ui.say(`Filed entry ${entryId} in page ${written.pageId} (revision ${written.revision}).`);
}

async function unfile(entryId) {
  const written = await api.unfileEntry(state.ws, state.page.pageId, entryId, state.page.revision);
  await Promise.all([openPage(written.pageId), listPages()]);
  ui.say(`Unfiled entry ${entryId} from page ${written.pageId} (revision ${written.revision}).`);
}

export function wirePages() {
  $("pages-refresh").addEventListener("click", ui.action(() => listPages()));
  $("page-file-form").addEventListener("submit", ui.action(() => fileEntry()));
}
