// The memory frame: sign-in, the workspace, and the navigation between its views (one shown at a time). Each
// view is its own module: editor, inbox (proposals and candidates), chat, entries, pages, changes, activity,
// settings.
// No build.
import { loadActivity, offerActivity, resetActivity, wireActivity } from "./activity.js";
import { api, signIn } from "./api.js";
import { resetChanges, wireChanges } from "./changes.js";
import { resetChat, wireChat } from "./chat.js";
import { setReadOnly, showDocument, wireEditor } from "./editor.js";
import { hideEntries, showEntries, wireEntries } from "./entries.js";
import { listCandidates, resetInbox, wireInbox } from "./inbox.js";
import { hidePages, showPages, wirePages } from "./pages.js";
import { loadKeySessions, loadPolicy, offerScopes, resetSettings, wireSettings } from "./settings.js";
import { $, action, element, say, showView, state, VIEWS } from "./ui.js";

function readOnlyReason(view) {
  if (view.role === "viewer") return "your role here is viewer, so you can read this memory but not save, clear or undo.";
  return `in a ${view.shareType} workspace only the owner saves; your role is ${view.role}.`;
}

/** The person's view of the workspace (role, write right, AI) as the API says it now. */
function showWorkspace(view) {
  state.view = view;
  $("role").textContent = `${view.name} (${view.shareType}), owner ${view.ownerId}; you are ${view.role}.`;
  setReadOnly(!view.canWrite, view.canWrite ? "" : readOnlyReason(view));
  $("ai-enabled").checked = view.aiEnabled;
  const owner = view.role === "owner";
  for (const id of ["ai-enabled", "ai-apply", "policy-mode", "policy-apply"]) $(id).disabled = !owner;
  $("owner-only").hidden = owner;
  offerActivity(view);
}

function forgetWorkspace() {
  state.ws = null;
  state.view = null;
  state.saved = "";
  state.saving = null; // a Save still running was the other workspace's: a send here does not wait for it
  state.conflict = false;
  $("draft").value = "";
  $("views").hidden = true;
  $("ws-current").hidden = true;
  $("ws-summary").textContent = "Open or create a workspace";
  $("ws-switch").open = true;
  for (const id of VIEWS) $(id).hidden = true;
  $("conflict").hidden = true;
  hideEntries();
  hidePages();
  resetInbox();
  resetChanges();
  resetChat();
  resetSettings();
  resetActivity();
}

/** Opens `id` only once it is known to be readable: a wrong id leaves the open workspace as it was. */
async function openWorkspace(id) {
  if (!id) throw new Error("Enter a workspace id.");
  const view = await api.workspace(id); // a non-member gets WORKSPACE_NOT_FOUND here and sees nothing
  const doc = await api.read(id);
  forgetWorkspace();
  state.ws = id;
  $("ws-id").value = id;
  if ([...$("ws-pick").options].some((o) => o.value === id)) $("ws-pick").value = id;
  $("views").hidden = false;
  $("ws-current").textContent = `Open: ${view.name} (${view.role}).`;
  $("ws-current").hidden = false;
  $("ws-summary").textContent = "Switch to another workspace, or create one";
  $("ws-switch").open = false;
  showView("editor");
  showWorkspace(view);
  offerScopes(view.role);
  showDocument(doc);
  $("conv-id").value ||= `conv-${crypto.randomUUID().slice(0, 8)}`;
  await Promise.all([loadPolicy(), loadKeySessions(), showEntries(id, view), showPages(id), listCandidates()]);
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
    const option = element("option", `${w.name} — ${w.role} (${w.workspaceId})`);
    option.value = w.workspaceId;
    pick.append(option);
  }
  $("ws-none").hidden = workspaces.length > 0;
  if (state.ws) pick.value = state.ws;
  return workspaces;
}

function wire() {
  wireEditor();
  wireChanges();
  wireChat();
  wireEntries();
  wirePages();
  wireInbox(action);
  wireSettings(showWorkspace);
  wireActivity(action);
  const activity = action(() => loadActivity());
  window.addEventListener("hashchange", () => {
    if (!state.ws) return;
    showView(location.hash.slice(1));
    if (location.hash === "#activity") activity(); // the trail as it is now, on every visit
  });
  $("signin-form").addEventListener(
    "submit",
    action(async () => {
      const jwt = $("jwt").value.trim();
      const user = $("dev-user").value.trim();
      if (!jwt && !user) throw new Error("Enter a dev user or a JWT.");
      signIn(jwt || `dev:${user}`);
      state.user = jwt ? "" : user;
      forgetWorkspace();
      $("whoami").textContent = `Signed in as ${jwt ? "(JWT)" : user}.`;
      $("jwt").value = "";
      $("signin-form").hidden = true;
      $("switch-user").hidden = false;
      $("workspace").hidden = false;
      $("ws-pick").replaceChildren();
      await loadWorkspaces();
      say("Signed in.");
    }),
  );
  $("switch-user").addEventListener("click", () => {
    $("signin-form").hidden = false;
    $("switch-user").hidden = true;
    $("dev-user").focus();
  });
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
}

wire();
