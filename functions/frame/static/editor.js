// The memory document: edit, save, a conflict with the draft's diff against the newer text, clear, undo.
import { ApiError, api } from "./api.js";
import { lines, diffLines } from "./diff.js";
import { PageRefusal } from "./messages.js";
import { $, action, diffInto, fail, say, state } from "./ui.js";

export const dirty = () => $("draft").value !== state.saved;

function showDirty() {
  $("dirty").textContent = dirty() ? "Unsaved changes (a draft is never sent as saved memory)." : "";
}

const WRITE_CONTROLS = ["save", "clear", "undo", "overwrite", "clear-save-first", "clear-discard"];

/** Read only when the person's role cannot write, said before any attempt (`reason` is shown beside it). */
export function setReadOnly(readOnly, reason = "") {
  state.readOnly = readOnly;
  $("draft").readOnly = readOnly;
  for (const id of WRITE_CONTROLS) $(id).disabled = readOnly;
  $("read-only").textContent = readOnly ? `Read only: ${reason}` : "";
  $("read-only").hidden = !readOnly;
}

export function showDocument(doc) {
  state.base = doc.version;
  state.conflict = false;
  state.saved = doc.content;
  $("draft").value = doc.content;
  $("doc-meta").textContent = doc.version
    ? `Version ${doc.version}, ${doc.bytes} bytes, by ${doc.updatedBy} at ${doc.updatedAt}`
    : "No memory yet (version 0): write the first version below, or let the assistant propose it.";
  $("conflict").hidden = true;
  $("clear-dirty").hidden = true;
  showDirty();
}

export async function load() {
  showDocument(await api.read(state.ws));
}

/** What the page tells a turn of its own saves (`memoryState`): the version it last saw acknowledged, or a
 * conflict it is showing. An unsaved draft is never reported; the in-flight Save, if any, is `state.saving`. */
export function memoryState() {
  return state.conflict ? { state: "conflict" } : { state: "saved", version: state.base };
}

/** How long a chat send or an inbox apply waits for a Save in flight (docs/decisions/0065). */
export const SAVE_WAIT_MS = 5000;

/** How `saving` (a Save's promise) ended, or "running" if it had not settled within `ms`: one timer raced with
 * the promise itself, never a poll. */
function settled(saving, ms) {
  let timer;
  const late = new Promise((resolve) => {
    timer = setTimeout(() => resolve("running"), ms);
  });
  const ended = saving.then(
    (ok) => (ok ? "saved" : "failed"),
    () => "failed",
  );
  return Promise.race([ended, late]).finally(() => clearTimeout(timer));
}

/** A Save the person started is acknowledged before what they do next is sent (a chat turn, applying a
 * proposal): waited for, at most SAVE_WAIT_MS, saying `waiting` meanwhile. Throws the refusal of `refusals`
 * (`{running, failed}`: PageRefusal codes) when the Save is still running or did not save. */
export async function afterSave(waiting, refusals) {
  if (!state.saving) return;
  say(waiting);
  const outcome = await settled(state.saving, SAVE_WAIT_MS);
  if (outcome === "running") throw new PageRefusal(refusals.running);
  if (outcome === "failed") throw new PageRefusal(refusals.failed);
}

/** A Save, and the reload after it, tracked as one promise while it runs: a chat send and an inbox apply wait
 * for it. It settles to whether it saved (a failure has been said already). */
function save(content, base) {
  const saving = saveNow(content, base);
  state.saving = saving;
  const done = () => {
    if (state.saving === saving) state.saving = null;
  };
  saving.then(done, done);
  return saving;
}

async function saveNow(content, base) {
  try {
    const saved = await api.save(state.ws, content, base);
    await load();
    const warned = (saved.warnings || []).map((w) => `${w.kind} ×${w.count}`).join(", ");
    say(`Saved version ${saved.version}.${warned ? ` It holds ${warned}.` : ""}`);
    return true;
  } catch (error) {
    if (error instanceof ApiError && error.code === "STALE_BASE_VERSION") {
      await showConflict();
    } else if (error instanceof ApiError && error.code === "FORBIDDEN") {
      setReadOnly(true, "your role no longer lets you save here (it changed after you opened the workspace).");
    }
    fail(error);
    return false;
  }
}

/** The newer text, and what the draft would change in it, line by line; the draft stays in the editor. */
async function showConflict() {
  const newer = await api.read(state.ws);
  state.newer = newer;
  $("newer").value = newer.content;
  $("newer-version").textContent = String(newer.version);
  diffInto($("conflict-diff"), diffLines(lines(newer.content), lines($("draft").value)));
  $("conflict").hidden = false;
  state.conflict = true;
}

async function clearMemory() {
  const cleared = await api.clear(state.ws, state.base);
  await load();
  say(`Cleared: version ${cleared.version} is empty.`);
}

async function undo() {
  if (dirty()) {
    fail("Resolve your unsaved draft first: Save it, or Reload to discard it.");
    return;
  }
  const { versions } = await api.versions(state.ws, 10);
  const previous = versions.find((v) => v.version < state.base && !v.purgedAt);
  if (!previous) {
    fail("Nothing to undo.");
    return;
  }
  const restored = await api.undo(state.ws, previous.version, state.base);
  await load();
  say(`Undone: version ${restored.version} restores version ${previous.version}.`);
}

export function wireEditor() {
  $("draft").addEventListener("input", showDirty);
  $("save").addEventListener("click", action(() => save($("draft").value, state.base)));
  $("reload").addEventListener("click", action(load));
  $("overwrite").addEventListener("click", action(() => save($("draft").value, state.newer.version)));
  $("take-newer").addEventListener("click", action(load));
  $("clear").addEventListener(
    "click",
    action(async () => {
      if (dirty()) {
        $("clear-dirty").hidden = false;
        $("clear-save-first").focus();
        return;
      }
      await clearMemory();
    }),
  );
  $("clear-save-first").addEventListener(
    "click",
    action(async () => {
      $("clear-dirty").hidden = true;
      if (await save($("draft").value, state.base)) await clearMemory();
    }),
  );
  $("clear-discard").addEventListener(
    "click",
    action(async () => {
      $("draft").value = state.saved;
      await clearMemory();
    }),
  );
  $("clear-cancel").addEventListener("click", () => {
    $("clear-dirty").hidden = true;
    $("draft").focus();
  });
  $("undo").addEventListener("click", action(undo));
}
