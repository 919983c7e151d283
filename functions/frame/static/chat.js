// Chat: a turn with the workspace's assistant, its transcript (Markdown shown as text, line breaks kept), and
// the receipts of what each model call was given. Proposals a turn made go to the review inbox.
import { api } from "./api.js";
import { openRevision } from "./changes.js";
import { afterSave, dirty, load, memoryState } from "./editor.js";
import { addProposals } from "./inbox.js";
import { renderMarkdown } from "./markdown.js";
import { $, action, cell, element, empty, fail, say, shortId, state, when } from "./ui.js";

export function resetChat() {
  $("transcript").replaceChildren();
  $("transcript-empty").hidden = false;
  $("receipts").tBodies[0].replaceChildren();
  $("receipts").hidden = true;
  $("receipts-empty").hidden = true;
}

/** One message of the transcript: who, then the text (`markdown`: rendered safely; else plain, lines kept). */
function transcript(who, text, { className, markdown = false } = {}) {
  const li = element("li", undefined, `message ${className || ""}`.trim());
  li.append(element("p", who, "who"));
  const body = element("div", undefined, "said");
  if (markdown) body.append(renderMarkdown(text));
  else body.append(element("p", text, "plain"));
  li.append(body);
  $("transcript").append(li);
  $("transcript-empty").hidden = true;
  return li;
}

function outcomeLine(text, className) {
  const li = element("li", undefined, "outcome");
  li.append(element("span", text, className));
  $("transcript").append(li);
  return li;
}

function proposedLine(count) {
  const li = outcomeLine("The agent proposed a memory edit; nothing was saved. ");
  const link = element("a", count > 1 ? `Review ${count} in the inbox` : "Review it in the inbox");
  link.href = "#inbox";
  li.append(link);
}

/** A Save the person started is acknowledged before a turn is sent (docs/decisions/0065). */
const afterSaveToSend = () =>
  afterSave("Waiting for your Save to finish before sending…", {
    running: "SAVE_STILL_RUNNING",
    failed: "SAVE_NOT_SAVED",
  });

async function sendTurn() {
  const conv = $("conv-id").value.trim();
  const message = $("message").value;
  if (!message.trim()) throw new Error("Write a message first.");
  await afterSaveToSend();
  const body = { workspaceId: state.ws, message, idempotencyKey: crypto.randomUUID(), memoryState: memoryState() };
  if ($("turn-ks").value) body.keySessionId = $("turn-ks").value;
  const started = await api.startTurn(conv, body);
  transcript("You", message, { className: "you" });
  $("message").value = "";
  say("The assistant is working…");
  let turn = await api.turn(conv, started.turnId);
  while (turn.status === "running") {
    await new Promise((resolve) => setTimeout(resolve, 300)); // polling the API, not a test's synchronisation
    turn = await api.turn(conv, started.turnId);
  }
  if (turn.status !== "completed") {
    fail("The assistant could not finish this turn. Nothing more was changed; try again.");
    return;
  }
  transcript("Assistant", turn.answer || "", { className: "assistant", markdown: true });
  for (const o of turn.toolOutcomes) {
    if (o.tool !== "remember_in_memory") continue;
    if (o.outcome === "committed") outcomeLine(`Remembered (version ${o.version}).`, "remembered");
    else if (o.outcome !== "proposal" && o.outcome !== "conflict")
      outcomeLine(`Not remembered (${o.outcome}${o.predicate ? `: ${o.predicate}` : ""}).`);
  }
  const proposals = turn.proposals || [];
  if (proposals.length) {
    addProposals(proposals, { turnId: started.turnId, user: state.user });
    proposedLine(proposals.length);
  }
  if (!dirty()) await load(); // a draft in progress is never replaced
  say("Turn completed.");
}

async function loadReceipts() {
  const { receipts } = await api.receipts($("conv-id").value);
  const body = $("receipts").tBodies[0];
  body.replaceChildren();
  for (const r of receipts) {
    const row = body.insertRow();
    cell(row, when(r.at)).title = r.at;
    cell(row, r.turnId ? shortId(r.turnId) : "—", "id").title = r.turnId || "";
    cell(row, r.status);
    const td = row.insertCell();
    if (r.revision) {
      const open = element("button", `Open revision ${r.revision}`);
      open.type = "button";
      open.addEventListener("click", action(() => openRevision(r.revision)));
      td.append(open);
    } else {
      td.textContent = "—";
    }
  }
  empty("receipts", receipts.length);
  say(`${receipts.length} receipts.`);
}

export function wireChat() {
  $("chat-form").addEventListener("submit", action(sendTurn));
  $("receipts-load").addEventListener("click", action(loadReceipts));
}
