// The memory frame: editor, Changes (history, diff, blame), settings, chat and receipts; entries and candidates
// in entries.js. No build step.
import { ApiError, api, signIn } from "./api.js";
import { blame, diffLines, lines } from "./diff.js";
import { hideEntries, showEntries, wireEntries } from "./entries.js";

const $ = (id) => document.getElementById(id);
const state = { user: null, ws: null, view: null, base: 0, saved: "", readOnly: false };

function say(text) {
  $("status").textContent = text;
  $("error").hidden = true;
  $("error").textContent = "";
}

function fail(error) {
  $("error").textContent = error instanceof Error ? error.message : String(error);
  $("error").hidden = false;
  $("status").textContent = "";
}

/** Runs an action from a control, turning its failure into the stable error shown to the person. */
function action(fn) {
  return async (event) => {
    if (event) event.preventDefault();
    try {
      await fn(event);
    } catch (error) {
      fail(error);
    }
  };
}

const dirty = () => $("draft").value !== state.saved;

function showDirty() {
  $("dirty").textContent = dirty() ? "Unsaved changes (a draft is never sent as saved memory)." : "";
}

const WRITE_CONTROLS = ["save", "clear", "undo", "overwrite", "clear-save-first", "clear-discard"];

/** Read only when the person's role cannot write, said before any attempt (`reason` is shown beside it). */
function setReadOnly(readOnly, reason = "") {
  state.readOnly = readOnly;
  $("draft").readOnly = readOnly;
  for (const id of WRITE_CONTROLS) $(id).disabled = readOnly;
  $("read-only").textContent = readOnly ? `Read only: ${reason}` : "";
  $("read-only").hidden = !readOnly;
}

function readOnlyReason(view) {
  if (view.role === "viewer") return "your role here is viewer, so you can read this memory but not save, clear or undo.";
  return `in a ${view.shareType} workspace only the owner saves; your role is ${view.role}.`;
}

/** The person's view of the workspace (role, write right, AI) as the API says it now. */
function showView(view) {
  state.view = view;
  $("role").textContent = `${view.name} (${view.shareType}), owner ${view.ownerId}; you are ${view.role}.`;
  setReadOnly(!view.canWrite, view.canWrite ? "" : readOnlyReason(view));
  $("ai-enabled").checked = view.aiEnabled;
  const owner = view.role === "owner";
  for (const id of ["ai-enabled", "ai-apply", "policy-mode", "policy-apply"]) $(id).disabled = !owner;
  $("owner-only").hidden = owner;
}

function showDocument(doc) {
  state.base = doc.version;
  state.saved = doc.content;
  $("draft").value = doc.content;
  $("doc-meta").textContent = doc.version
    ? `Version ${doc.version}, ${doc.bytes} bytes, by ${doc.updatedBy} at ${doc.updatedAt}`
    : "No memory yet (version 0).";
  $("conflict").hidden = true;
  $("clear-dirty").hidden = true;
  showDirty();
}

function forgetWorkspace() {
  state.ws = null;
  state.view = null;
  state.saved = "";
  $("draft").value = "";
  for (const id of ["editor", "changes", "settings", "chat", "entries", "candidates", "conflict", "revision"]) {
    $(id).hidden = true;
  }
  hideEntries();
  for (const id of ["history", "blame", "receipts"]) $(id).tBodies[0].replaceChildren();
  $("diff").textContent = "";
  $("transcript").replaceChildren();
  $("key-sessions").replaceChildren();
}

async function load() {
  showDocument(await api.read(state.ws));
}

async function loadPolicy() {
  const policy = await api.policy(state.ws);
  $("policy-mode").value = policy.mode;
  $("policy-meta").textContent = `revision ${policy.policyRevision}, clear generation ${policy.clearGeneration}`;
  state.policyRevision = policy.policyRevision;
}

async function openWorkspace(id) {
  forgetWorkspace();
  const view = await api.workspace(id); // a non-member gets WORKSPACE_NOT_FOUND here and sees nothing
  const doc = await api.read(id);
  state.ws = id;
  $("ws-id").value = id;
  if ([...$("ws-pick").options].some((o) => o.value === id)) $("ws-pick").value = id;
  for (const section of ["editor", "changes", "settings", "chat", "entries", "candidates"]) $(section).hidden = false;
  showView(view);
  showDocument(doc);
  $("conv-id").value ||= `conv-${crypto.randomUUID().slice(0, 8)}`;
  await Promise.all([loadPolicy(), loadKeySessions(), showEntries(id, view)]);
  say(`Opened workspace ${id}.`);
}

/** The person's workspaces for the picker. The list is eventually consistent: one created a moment ago is
 * added here by the page itself. */
async function loadWorkspaces(extra) {
  const { workspaces } = await api.workspaces();
  if (extra && !workspaces.some((w) => w.workspaceId === extra.workspaceId)) workspaces.unshift(extra);
  const pick = $("ws-pick");
  pick.replaceChildren();
  for (const w of workspaces) {
    const option = document.createElement("option");
    option.value = w.workspaceId;
    option.textContent = `${w.name} — ${w.role} (${w.workspaceId})`;
    pick.append(option);
  }
  if (state.ws) pick.value = state.ws;
  return workspaces;
}

async function loadKeySessions() {
  const { keySessions } = await api.keySessions(state.ws);
  $("key-sessions").replaceChildren(...keySessions.map(keySessionItem));
  return keySessions;
}

async function save(content, base) {
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

async function showConflict() {
  const newer = await api.read(state.ws);
  state.newer = newer;
  $("newer").value = newer.content;
  $("newer-version").textContent = String(newer.version);
  $("conflict").hidden = false; // the draft stays in the editor, untouched
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

function cell(row, text, className) {
  const td = row.insertCell();
  td.textContent = text;
  if (className) td.className = className;
  return td;
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
    cell(row, v.turnId || "—");
    cell(row, v.createdAt);
    cell(row, String(v.bytes));
  }
  say(`${versions.length} versions.`);
  return versions;
}

async function showDiff() {
  const from = Number($("diff-from").value);
  const to = Number($("diff-to").value);
  const [a, b] = await Promise.all([api.version(state.ws, from), api.version(state.ws, to)]);
  const out = $("diff");
  out.replaceChildren();
  for (const step of diffLines(lines(a.content), lines(b.content))) {
    const span = document.createElement("span");
    span.className = step.kind;
    span.textContent = `${{ same: " ", add: "+", del: "-" }[step.kind]} ${step.line}`;
    out.append(span);
  }
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
  for (const { line, number, origin } of blame(chain)) {
    const row = body.insertRow();
    cell(row, String(number));
    cell(row, `v${origin.version}`);
    cell(row, origin.author);
    cell(row, origin.turnId || "—");
    cell(row, line, "text");
  }
  say(`Blame of version ${target}.`);
}

async function openRevision(n) {
  const v = await api.version(state.ws, n);
  $("revision-number").textContent = String(n);
  $("revision-text").textContent = v.content;
  $("revision").hidden = false;
  $("changes").hidden = false;
  $("revision").scrollIntoView();
  say(`Revision ${n}, as that model call was given it.`);
}

async function loadReceipts() {
  const { receipts } = await api.receipts($("conv-id").value);
  const body = $("receipts").tBodies[0];
  body.replaceChildren();
  for (const r of receipts) {
    const row = body.insertRow();
    cell(row, r.at);
    cell(row, r.turnId || "—");
    cell(row, r.status);
    const td = row.insertCell();
    if (r.revision) {
      const open = document.createElement("button");
      open.type = "button";
      open.textContent = `Open revision ${r.revision}`;
      open.addEventListener("click", action(() => openRevision(r.revision)));
      td.append(open);
    } else {
      td.textContent = "—";
    }
  }
  say(`${receipts.length} receipts.`);
}

function transcript(text, className) {
  const li = document.createElement("li");
  li.textContent = text;
  if (className) li.className = className;
  $("transcript").append(li);
}

async function sendTurn() {
  const conv = $("conv-id").value;
  const body = { workspaceId: state.ws, message: $("message").value, idempotencyKey: crypto.randomUUID() };
  if ($("turn-ks").value) body.keySessionId = $("turn-ks").value;
  const started = await api.startTurn(conv, body);
  transcript(`You: ${body.message}`);
  $("message").value = "";
  say("The assistant is working…");
  let turn = await api.turn(conv, started.turnId);
  while (turn.status === "running") {
    await new Promise((resolve) => setTimeout(resolve, 300));
    turn = await api.turn(conv, started.turnId);
  }
  if (turn.status !== "completed") {
    fail(`The turn ${turn.status}.`);
    return;
  }
  transcript(`Assistant: ${turn.answer || ""}`);
  for (const o of turn.toolOutcomes) {
    if (o.tool !== "remember_in_memory") continue;
    if (o.outcome === "committed") transcript(`Remembered (version ${o.version}).`, "remembered");
    else if (o.outcome === "proposal") transcript("Proposed a memory edit (not saved).");
    else transcript(`Not remembered (${o.outcome}${o.predicate ? `: ${o.predicate}` : ""}).`);
  }
  if (!dirty()) await load(); // a draft in progress is never replaced
  say("Turn completed.");
}

function keySessionItem(session) {
  const li = document.createElement("li");
  const label = document.createElement("span");
  const expired = Date.parse(session.expiresAt) <= Date.now();
  const condition = session.revoked ? "revoked" : expired ? `expired ${session.expiresAt}` : `until ${session.expiresAt}`;
  label.textContent = `${session.keySessionId} [${session.scopes.join(", ")}] (${condition}) `;
  const use = document.createElement("button");
  use.type = "button";
  use.textContent = "Use for turns";
  use.addEventListener("click", () => ($("turn-ks").value = session.keySessionId));
  use.disabled = session.revoked || expired;
  const revoke = document.createElement("button");
  revoke.type = "button";
  revoke.textContent = "Revoke";
  revoke.disabled = session.revoked;
  revoke.addEventListener(
    "click",
    action(async () => {
      await api.revokeKeySession(state.ws, session.keySessionId);
      await loadKeySessions();
      say("Key session revoked.");
    }),
  );
  li.dataset.keySession = session.keySessionId;
  li.append(label, use, revoke);
  return li;
}

function wire() {
  wireEntries({ say, fail, action, cell });
  $("signin-form").addEventListener(
    "submit",
    action(async () => {
      const jwt = $("jwt").value.trim();
      const user = $("dev-user").value.trim();
      if (!jwt && !user) throw new Error("Enter a dev user or a JWT.");
      signIn(jwt || `dev:${user}`);
      state.user = jwt ? "(JWT)" : user;
      forgetWorkspace();
      $("whoami").textContent = `Signed in as ${state.user}.`;
      $("workspace").hidden = false;
      $("ws-pick").replaceChildren();
      await loadWorkspaces();
      say("Signed in.");
    }),
  );
  $("pick-form").addEventListener(
    "submit",
    action(() => {
      if (!$("ws-pick").value) throw new Error("No workspace to open: create one, or ask to be added.");
      return openWorkspace($("ws-pick").value);
    }),
  );
  $("ws-refresh").addEventListener("click", action(() => loadWorkspaces()));
  $("open-form").addEventListener("submit", action(() => openWorkspace($("ws-id").value.trim())));
  $("create-form").addEventListener(
    "submit",
    action(async () => {
      const name = $("ws-name").value;
      const created = await api.createWorkspace(name, $("ws-share").value);
      await loadWorkspaces({ workspaceId: created.workspaceId, name, role: "owner" });
      await openWorkspace(created.workspaceId);
    }),
  );
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
  $("history-load").addEventListener("click", action(loadHistory));
  $("diff-form").addEventListener("submit", action(showDiff));
  $("blame-form").addEventListener("submit", action(showBlame));
  $("policy-form").addEventListener(
    "submit",
    action(async () => {
      try {
        await api.setPolicy(state.ws, $("policy-mode").value, state.policyRevision);
      } finally {
        await loadPolicy();
      }
      say(`Policy is ${$("policy-mode").value}.`);
    }),
  );
  $("ai-form").addEventListener(
    "submit",
    action(async () => {
      const set = await api.setAi(state.ws, $("ai-enabled").checked);
      showView(await api.workspace(state.ws));
      say(`Workspace AI ${set.enabled ? "on" : "off"}.`);
    }),
  );
  $("ks-form").addEventListener(
    "submit",
    action(async () => {
      await api.openKeySession(state.ws, Number($("ks-ttl").value));
      await loadKeySessions();
      say("Key session opened.");
    }),
  );
  $("ks-load").addEventListener("click", action(loadKeySessions));
  $("chat-form").addEventListener("submit", action(sendTurn));
  $("receipts-load").addEventListener("click", action(loadReceipts));
}

wire();
