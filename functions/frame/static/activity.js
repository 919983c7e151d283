// Activity: the workspace's audit trail (docs/architecture.md#the-audit-trail), newest first, as the API lets
// this person read it (the owner everyone's, any other member their own), with filters and "Load more".
import { api } from "./api.js";
import { describe, KINDS, targetId, who } from "./activity-words.js";
import { $, ago, cell, element, empty, say, state } from "./ui.js";

/** The filters of the list shown (what "Load more" continues), the cursor after its last page, and the number of
 * the latest request: an answer to an older one (a visit, then a filter, or another workspace) is dropped. */
const shown = { filters: {}, cursor: null, asked: 0 };

/** The kind filter's options, from the one list of kinds. */
function offerKinds() {
  const any = element("option", "any");
  any.value = "";
  const kinds = KINDS.map(([value, label]) => {
    const option = element("option", label);
    option.value = value;
    return option;
  });
  $("activity-kind").replaceChildren(any, ...kinds);
}

/** Empties the view (another workspace, another sign-in). */
export function resetActivity() {
  shown.filters = {};
  shown.cursor = null;
  shown.asked += 1;
  $("activity-filter").reset();
  $("activity-list").tBodies[0].replaceChildren();
  for (const id of ["activity-list", "activity-list-empty", "activity-more"]) $(id).hidden = true;
}

/** Who may be asked for: the owner filters by actor; anyone else is told the list is their own actions. */
export function offerActivity(view) {
  const owner = view.role === "owner";
  $("activity-actor-field").hidden = !owner;
  $("activity-actor").disabled = !owner;
  $("activity-scope").textContent = owner
    ? "As the owner you see every member's actions and their agents'."
    : "This shows your own actions and your agents' on your turns; the owner sees everyone's.";
}

/** A filter date (a UTC day) as the API's RFC 3339 instant: the day's start, or for `until` its last moment. */
const instant = (day, end) => (day ? `${day}T${end ? "23:59:59.999" : "00:00:00"}Z` : undefined);

function filters() {
  const owner = state.view?.role === "owner";
  return {
    kind: $("activity-kind").value || undefined,
    actor: (owner && $("activity-actor").value.trim()) || undefined,
    since: instant($("activity-since").value, false),
    until: instant($("activity-until").value, true),
  };
}

function row(body, event) {
  const tr = body.insertRow();
  tr.dataset.eventId = event.eventId;
  cell(tr, ago(event.at)).title = event.at;
  const actor = who(event);
  const whoCell = cell(tr, actor.text);
  if (actor.title) whoCell.title = actor.title;
  cell(tr, describe(event));
  const ids = event.targets.map(targetId);
  const idCell = cell(tr, ids.map((t) => t.text).join(", ") || "—", "id");
  const whole = ids.filter((t) => t.title).map((t) => t.title);
  if (whole.length) idCell.title = whole.join(", ");
}

/** The first page for the filters in the form, or (`more`) the next page of the list shown. A refused request
 * leaves the list and its filters as they were. */
export async function loadActivity(more = false) {
  const asked = more ? shown.filters : filters();
  const ticket = ++shown.asked;
  const { events, nextCursor } = await api.audit(state.ws, { ...asked, cursor: more ? shown.cursor : undefined });
  if (ticket !== shown.asked) return; // a newer request is under way: its answer is the one shown
  const body = $("activity-list").tBodies[0];
  if (!more) body.replaceChildren();
  for (const event of events) row(body, event);
  shown.filters = asked;
  shown.cursor = nextCursor;
  $("activity-more").hidden = !nextCursor;
  empty("activity-list", body.rows.length);
  const count = `${body.rows.length} ${body.rows.length === 1 ? "event" : "events"}`;
  say(nextCursor ? `${count} shown; there may be more.` : `${count} shown, all there are.`);
}

export function wireActivity(action) {
  offerKinds();
  $("activity-filter").addEventListener("submit", action(() => loadActivity()));
  $("activity-more").addEventListener("click", action(() => loadActivity(true)));
}
