// Settings: the memory policy and workspace AI (the owner's), and the person's key sessions.
import { api } from "./api.js";
import { $, action, button, element, empty, say, shortId, state, when } from "./ui.js";

export async function loadPolicy() {
  const policy = await api.policy(state.ws);
  $("policy-mode").value = policy.mode;
  $("policy-meta").textContent = `revision ${policy.policyRevision}, clear generation ${policy.clearGeneration}`;
  state.policyRevision = policy.policyRevision;
}

/** The sessions' choice for a turn: none, or one that is still usable (shown by its end, not its raw id). */
function turnChoices(sessions) {
  const pick = $("turn-ks");
  const chosen = pick.value;
  const none = element("option", "None (the turn needs no key session)");
  none.value = "";
  const usable = (s) => !s.revoked && Date.parse(s.expiresAt) > Date.now();
  // The chosen one stays chosen even once it ends, said so: the next turn is refused, never silently unkeyed.
  const listed = sessions.filter((s) => usable(s) || s.keySessionId === chosen);
  const options = listed.map((s) => {
    const condition = usable(s) ? `until ${when(s.expiresAt)}` : "no longer usable";
    const option = element("option", `Key session ${shortId(s.keySessionId)} (${condition})`);
    option.value = s.keySessionId;
    return option;
  });
  pick.replaceChildren(none, ...options);
  pick.value = listed.some((s) => s.keySessionId === chosen) ? chosen : "";
}

function keySessionItem(session) {
  const li = element("li");
  const expired = Date.parse(session.expiresAt) <= Date.now();
  const until = when(session.expiresAt);
  const condition = session.revoked ? "revoked" : expired ? `expired ${until}` : `until ${until}`;
  const label = element("span", `Key session ${shortId(session.keySessionId)} [${session.scopes.join(", ")}] (${condition}) `);
  label.title = session.keySessionId;
  const use = button("Use for turns", () => {
    $("turn-ks").value = session.keySessionId;
    say(`Turns now use key session ${shortId(session.keySessionId)}.`);
  });
  use.disabled = session.revoked || expired;
  const revoke = button("Revoke", async () => {
    await api.revokeKeySession(state.ws, session.keySessionId);
    await loadKeySessions();
    say("Key session revoked.");
  });
  revoke.disabled = session.revoked;
  li.dataset.keySession = session.keySessionId;
  li.append(label, use, revoke);
  return li;
}

export async function loadKeySessions() {
  const { keySessions } = await api.keySessions(state.ws);
  $("key-sessions").replaceChildren(...keySessions.map(keySessionItem));
  empty("key-sessions", keySessions.length);
  turnChoices(keySessions);
  return keySessions;
}

const SCOPE_BOXES = ["ks-scope-read", "ks-scope-write", "ks-scope-notes"];

/** The scopes ticked, in the API's order; a viewer may delegate reading only (docs/decisions/0054). */
function chosenScopes() {
  return SCOPE_BOXES.map($).filter((box) => box.checked && !box.disabled).map((box) => box.value);
}

/** Least privilege by default: reading only, ticked afresh for each workspace; the write scopes are offered to
 * roles that may delegate them (a viewer's request for them would be refused, 403 SCOPE_EXCEEDS_ROLE). */
export function offerScopes(role) {
  for (const id of SCOPE_BOXES) $(id).checked = id === "ks-scope-read";
  for (const id of ["ks-scope-write", "ks-scope-notes"]) $(id).disabled = role === "viewer";
}

export function resetSettings() {
  $("key-sessions").replaceChildren();
  turnChoices([]);
}

export function wireSettings(showWorkspace) {
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
      showWorkspace(await api.workspace(state.ws));
      say(`Workspace AI ${set.enabled ? "on" : "off"}.`);
    }),
  );
  $("ks-form").addEventListener(
    "submit",
    action(async () => {
      const scopes = chosenScopes();
      if (!scopes.length) throw new Error("Choose at least one thing the key session may do.");
      const opened = await api.openKeySession(state.ws, Number($("ks-ttl").value), scopes);
      await loadKeySessions();
      say(`Key session opened: ${opened.scopes.join(", ")}.`);
    }),
  );
  $("ks-load").addEventListener("click", action(loadKeySessions));
}
