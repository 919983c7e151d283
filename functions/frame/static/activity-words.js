// The audit trail in words a person reads: who acted and what they did. The one place that maps an event's kind
// and op (store/audit_trail.py's fixed words) to a sentence; an unknown pair is said as its raw words.
import { shortId } from "./ui.js";

/** The kinds the API knows (`AuditKind`), with what the kind filter calls them. */
export const KINDS = [
  ["document", "the memory document"],
  ["entry", "entries"],
  ["candidate", "entry candidates"],
  ["policy", "memory policy"],
  ["consent", "workspace AI"],
  ["retention", "history retention"],
  ["member", "members"],
  ["key-session", "key sessions"],
  ["notes", "working notes"],
  ["turn", "turns"],
  ["workspace", "the workspace"],
  ["erasure", "erasures of members"],
  ["export", "exports"],
  ["import", "imports"],
  ["consolidation", "nightly consolidation"],
  ["consolidation-run", "consolidation runs"],
  ["page", "pages"],
  ["page-categories", "page categories"],
];

const v = (t) => (t?.version != null ? ` (v${t.version})` : "");
const rev = (t) => (t?.version != null ? ` (revision ${t.version})` : "");
const id = (t) => shortId(t?.id || "");

/** kind → op → the sentence for its first target `t`; `"*"` is any op (the op is then a value: a mode, a role). */
const WORDS = {
  document: {
    save: (t) => `saved the document${v(t)}`,
    clear: (t) => `cleared the document${v(t)}`,
    undo: (t) => `undid: restored an earlier version as v${t?.version ?? t?.id}`,
    capture: (t) => `remembered in the document${v(t)}`,
    purge: (t) => `purged version ${t?.version ?? t?.id} of the document`,
  },
  entry: {
    created: (t) => `created entry ${id(t)}${rev(t)}`,
    revised: (t) => `revised entry ${id(t)}${rev(t)}`,
    forgotten: (t) => `forgot entry ${id(t)}`,
  },
  candidate: {
    proposed: (t) => `proposed entry candidate ${id(t)}`,
    accepted: (t) => `accepted entry candidate ${id(t)}`,
    rejected: (t) => `rejected entry candidate ${id(t)}`,
  },
  policy: { "*": (t, op) => `set policy to ${op}` },
  consent: { "ai-on": () => "turned workspace AI on", "ai-off": () => "turned workspace AI off" },
  retention: { set: (t) => `set history retention to ${t?.version} days` },
  member: { "*": (t, op) => `made ${t?.id} ${op === "owner" ? "an owner" : `a member with role ${op}`}` },
  "key-session": {
    opened: (t) => `opened key session ${id(t)}`,
    revoked: (t) => `revoked key session ${id(t)}`,
  },
  notes: { written: (t) => `wrote working notes${rev(t)}` },
  turn: { admitted: (t) => `started turn ${id(t)}` },
  workspace: { created: () => "created the workspace", deleted: () => "deleted the workspace" },
  erasure: {
    requested: (t) => `erased a member (erasure ${id(t)})`,
    completed: (t) => `finished erasure ${id(t)}: receipt written`,
  },
  export: {
    requested: (t) => `requested export ${id(t)}`,
    downloaded: (t) => `downloaded export ${id(t)}`,
  },
  import: {
    requested: (t) => `started import ${id(t)}`,
    applied: (t) => `applied a batch of import ${id(t)}`,
    completed: (t) => `finished import ${id(t)}`,
  },
  consolidation: {
    "opted-in": () => "turned nightly consolidation on",
    "opted-out": () => "turned nightly consolidation off",
  },
  "consolidation-run": { requested: (t) => `asked for consolidation run ${id(t)}` },
  page: {
    created: (t) => `created page ${id(t)}`,
    revised: (t) => `edited page ${id(t)}${rev(t)}`,
    deleted: (t) => `deleted page ${id(t)}`,
    filed: (t) => `filed an entry in page ${id(t)}`,
    unfiled: (t) => `unfiled an entry from page ${id(t)}`,
  },
  "page-categories": { set: (t) => `set the page categories${rev(t)}` },
};

/** What the event did, for people: "saved the document (v3)", "forgot entry …", "set policy to auto". */
export function describe(event) {
  const target = event.targets.find((t) => t.kind === event.kind) || event.targets[0];
  const said = WORDS[event.kind]?.[event.op] || WORDS[event.kind]?.["*"];
  return said ? said(target, event.op) : `${event.kind} ${event.op}`;
}

/** A target's id as the Ids column shows it: a version by its number, a turn's long admission id shortened
 * (`title` keeps it whole), any other id whole, so it can be copied into the Entries view or the API. */
export function targetId(t) {
  if (t.kind === "document") return { text: `v${t.id}`, title: "" };
  if (t.kind === "turn") return { text: shortId(t.id), title: t.id };
  return { text: t.id, title: "" };
}

/** Who acted: the person, or "agent for <person>" with the turn's admission (or the key session) it acted in. */
export function who(event) {
  const actor = event.actor || "the service";
  if (event.actorKind !== "agent") return { text: actor, title: "" };
  const via = event.admissionId
    ? { text: ` (turn ${shortId(event.admissionId)})`, title: `admission ${event.admissionId}` }
    : event.keySessionId
      ? { text: ` (key session ${shortId(event.keySessionId)})`, title: `key session ${event.keySessionId}` }
      : { text: "", title: "" };
  return { text: `agent for ${actor}${via.text}`, title: via.title };
}
