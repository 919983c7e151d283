// The review inbox: everything awaiting a person. Document proposals (the memory edits the agent proposed in
// this window's turns, read_only or on a stale base) are applied with POST …/memory/proposals/apply; entry
// candidates (stored by the API) are accepted or rejected on their revision. Each says what accepting stores.
import { ApiError, api } from "./api.js";
import { afterSave, dirty, load } from "./editor.js";
import { listEntries } from "./entries.js";
import { $, button, element, empty, fail, say, shortId, state, when } from "./ui.js";

const inbox = { proposals: [], candidates: 0, cursor: null, next: 1 };

/** Forgets every proposal and candidate shown (another workspace, another sign-in). */
export function resetInbox() {
  inbox.proposals = [];
  inbox.candidates = 0;
  inbox.cursor = null;
  $("proposal-list").replaceChildren();
  $("candidate-list").replaceChildren();
  $("candidates-more").hidden = true;
  count();
}

function count() {
  const n = inbox.proposals.length + inbox.candidates;
  $("inbox-count").textContent = n ? `(${n})` : "";
  empty("proposal-list", inbox.proposals.length);
  empty("candidate-list", inbox.candidates);
}

const by = (user) => (user ? `by the agent in ${user}'s turn` : "by the agent");

/** A turn's proposals, added to the inbox (newest first) for the person whose turn it was. */
export function addProposals(proposals, { turnId, user }) {
  for (const p of proposals) {
    inbox.proposals.unshift({ ...p, id: `p${inbox.next++}`, turnId, user, applyOn: p.baseVersion, refused: "" });
  }
  renderProposals();
}

/** The edit script as +/- lines: what accepting writes into the memory, line by line. */
function editLines(edits) {
  const out = [];
  for (const e of edits) {
    if (e.op === "add") out.push(`+ ${e.line}${e.heading ? `    (under “${e.heading}”)` : ""}`);
    else if (e.op === "replace") out.push(`- ${e.old}`, `+ ${e.new}`);
    else if (e.op === "remove") out.push(`- ${e.line}`);
  }
  return out;
}

function proposalCard(p) {
  const li = element("li", undefined, p.refused ? "card refused" : "card");
  li.dataset.proposalId = p.id;
  const heading = `Memory edit ${by(p.user)}`;
  li.append(element("h4", heading));
  const meta = `Proposed on version ${p.baseVersion}, round ${p.round} of turn ${shortId(p.turnId)}`;
  li.append(element("p", meta, "meta"));
  li.append(element("p", "Applying saves a new version of the memory with these changes:"));
  const pre = element("pre", undefined, "proposal-diff");
  for (const line of editLines(p.edits)) pre.append(element("span", line, line.startsWith("+") ? "add" : "del"));
  li.append(pre);
  if (p.refused) {
    li.append(element("p", p.refused, "refusal"));
    li.append(button("Dismiss", () => dismiss(p)));
    return li;
  }
  if (p.applyOn !== p.baseVersion) {
    const note = `The memory is at version ${p.applyOn} now. Check that these changes still make sense there.`;
    li.append(element("p", note, "note"));
  }
  const apply = button(p.applyOn === p.baseVersion ? "Apply to the memory" : `Apply to version ${p.applyOn}`, () =>
    applyProposal(p),
  );
  apply.disabled = !state.view?.canWrite;
  li.append(apply, button("Dismiss", () => dismiss(p)));
  if (!state.view?.canWrite) li.append(element("p", "Only members who can save the memory apply proposals.", "note"));
  return li;
}

function renderProposals() {
  $("proposal-list").replaceChildren(...inbox.proposals.map(proposalCard));
  count();
}

function dismiss(p) {
  inbox.proposals = inbox.proposals.filter((x) => x !== p);
  renderProposals();
  say("Dismissed: the proposal was not applied.");
}

async function applyProposal(p) {
  // Applied on top of a Save still in flight, the edit would be judged against a version the person has not
  // seen acknowledged: wait for it, as a chat send does (the apply then answers STALE_BASE_VERSION if it moved).
  await afterSave("Waiting for your Save to finish before applying…", {
    running: "APPLY_SAVE_STILL_RUNNING",
    failed: "APPLY_SAVE_NOT_SAVED",
  });
  let written;
  try {
    written = await api.applyProposal(state.ws, p, p.applyOn);
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    if (error.code === "PROPOSAL_CLEARED") {
      p.refused = "Not applied: the memory was cleared after the agent proposed this.";
      renderProposals();
    } else if (error.code === "STALE_BASE_VERSION") {
      const current = await api.read(state.ws);
      p.applyOn = current.version;
      renderProposals();
      const text =
        `The memory changed since the agent proposed this (version ${p.baseVersion} then, ${current.version} ` +
        "now). Nothing was applied: review it against the current memory, then apply it there or dismiss it.";
      fail(error, text);
      return;
    }
    fail(error);
    return;
  }
  inbox.proposals = inbox.proposals.filter((x) => x !== p);
  renderProposals();
  if (!dirty()) await load();
  say(`Applied: the memory is at version ${written.version} with the agent's edit.`);
}

function pre(className, text) {
  return element("pre", text, className);
}

/** Everything accepting a save candidate would store besides title and summary: its key, body and sources. */
function candidateBody(c) {
  if (c.kind === "forget") return document.createTextNode("");
  const lines = [c.key ? `key ${c.key}` : "", c.body || "(no body)"];
  for (const s of c.sources) lines.push(`source ${s.kind} ${s.ref}${s.locator ? ` (${s.locator})` : ""}`);
  return pre("candidate-body", lines.filter(Boolean).join("\n"));
}

/** What the candidate changes: the revision it supersedes as stored now, the fields it changes, the body diff. */
function candidateChanges(c) {
  const box = element("div");
  const target = `entry ${c.entryId} (revision ${c.baseRevision})`;
  const stores =
    c.kind === "forget"
      ? `Accepting forgets ${target}: every revision is deleted.`
      : c.entryId
        ? `Accepting stores the next revision of ${target}.`
        : `Accepting stores a new ${c.type} entry (${c.scope}).`;
  box.append(element("p", stores, "stores"));
  const d = c.diff;
  if (d) {
    const stale = d.current ? "" : "No longer the current revision: accepting is refused. ";
    const changed = d.changed.join(", ") || "nothing";
    const what = `${stale}Replaces revision ${d.revision} (${d.type} “${d.title}” — ${d.summary}); changes ${changed}.`;
    box.append(element("p", what), pre("candidate-diff", d.bodyDiff || "(same body)"));
  }
  return box;
}

function candidateCard(c) {
  const li = element("li", undefined, "card");
  li.dataset.candidateId = c.candidateId;
  li.append(element("h4", c.title ?? "(no longer readable)"));
  if (c.summary) li.append(element("p", c.summary, "summary"));
  li.append(element("p", `${c.type}, ${c.scope} · ${by(c.proposedBy)} · ${when(c.createdAt)}`, "meta"));
  li.append(candidateBody(c), candidateChanges(c));
  li.append(button("Accept", () => decide(c, "accept")), button("Reject", () => decide(c, "reject")));
  return li;
}

export async function listCandidates(more = false) {
  const { candidates, nextCursor } = await api.candidates(state.ws, more ? inbox.cursor : undefined);
  const list = $("candidate-list");
  if (!more) list.replaceChildren();
  list.append(...candidates.map(candidateCard));
  inbox.candidates = list.children.length;
  inbox.cursor = nextCursor;
  $("candidates-more").hidden = !nextCursor;
  count();
  return candidates;
}

/** Accept or reject on the candidate's revision as listed (compare-and-set): a stale one reloads the list. */
async function decide(candidate, decision) {
  let written;
  try {
    written = await api.decideCandidate(state.ws, candidate.candidateId, decision, candidate.revision);
  } catch (error) {
    if (error instanceof ApiError && ["STALE_REVISION", "CANDIDATE_NOT_FOUND"].includes(error.code)) {
      await listCandidates();
    }
    throw error;
  }
  await Promise.all([listCandidates(), listEntries()]);
  say(
    decision === "accept"
      ? written.forgotten
        ? `Accepted: entry ${written.entryId} was forgotten.`
        : `Accepted: entry ${written.entryId} (revision ${written.revision}).`
      : "Rejected: the candidate was dropped.",
  );
}

export function wireInbox(action) {
  $("candidates-load").addEventListener(
    "click",
    action(async () => say(`${(await listCandidates()).length} pending candidates.`)),
  );
  $("candidates-more").addEventListener("click", action(() => listCandidates(true)));
}
