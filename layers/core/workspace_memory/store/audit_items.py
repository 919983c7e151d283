"""What each kind of written item says for the audit trail (`store/audit_trail.py`): its target, its op and
the actor it names; and the kinds whose writes are bookkeeping and audit nothing."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from workspace_memory.kernel.terms import CONSOLIDATION_AUTHOR, ActorKind, AuditKind, AuditOp
from workspace_memory.store import keys
from workspace_memory.store.audit_records import Target
from workspace_memory.store.ports import Item


@dataclass(frozen=True)
class Told:
    """What one change says for the audit: its target, its op, and the actor (and kind) it names, if any."""

    workspace_id: str
    target: Target
    op: str
    actor: str | None = None
    actor_kind: ActorKind | None = None
    admission_id: str | None = None
    """The admission the written item names (an agent's change in a turn)."""
    key_session: str | None = None
    """The key session the written item names (an agent runtime's admission)."""


def _ws(item: Item) -> str:
    return keys.workspace_of(item["pk"])


def _version(item: Item) -> Told:
    stub = "purgedBy" in item
    op = AuditOp.PURGE if stub else str(item.get("op", AuditOp.SAVE))
    by = item.get("purgedBy") if stub else item.get("author")
    kind = ActorKind.AGENT if op == AuditOp.CAPTURE else ActorKind.PERSON
    target = Target(AuditKind.DOCUMENT, str(int(item["version"])), int(item["version"]))
    return Told(_ws(item), target, op, by, kind, item.get("admissionId"))


def _entry(item: Item) -> Told:
    revision = int(item["revision"])
    target = Target(AuditKind.ENTRY, str(item["entryId"]), revision)
    if item.get("status") == "forgotten":
        return Told(_ws(item), target, AuditOp.FORGOTTEN, item.get("forgottenBy"), ActorKind.PERSON)
    if item.get("status") == "superseded":  # a head retired into another chain: the decider is the actor
        return Told(_ws(item), target, AuditOp.RETIRED, None, ActorKind.PERSON)
    agent = item.get("authorKind") == "agent"
    op = AuditOp.CREATED if revision == 1 else AuditOp.REVISED
    kind = ActorKind.AGENT if agent else ActorKind.PERSON
    return Told(_ws(item), target, op, item.get("author"), kind, item.get("admissionId"))


def _candidate(item: Item) -> Told:
    status = str(item["status"])
    target = Target(AuditKind.CANDIDATE, str(item["candidateId"]), int(item.get("revision", 1)))
    if status == "pending":
        by = item.get("proposedBy")
        kind = ActorKind.SERVICE if by == CONSOLIDATION_AUTHOR else ActorKind.AGENT
        return Told(_ws(item), target, AuditOp.PROPOSED, by, kind, item.get("admissionId"))
    return Told(_ws(item), target, AuditOp(status), item.get("decidedBy"), ActorKind.PERSON)


def _member(item: Item) -> Told:
    return Told(_ws(item), Target(AuditKind.MEMBER, str(item["userId"])), str(item.get("role", "member")))


def _workspace(item: Item) -> Told:
    target = Target(AuditKind.WORKSPACE, keys.workspace_of(item["pk"]))
    return Told(_ws(item), target, AuditOp.CREATED, item.get("ownerId"))


def _key_session(item: Item) -> Told:
    target = Target(AuditKind.KEY_SESSION, str(item["keySessionId"]))
    return Told(_ws(item), target, AuditOp.OPENED, item.get("openedBy"), ActorKind.PERSON)


def _revocation(item: Item) -> Told:
    target = Target(AuditKind.KEY_SESSION, str(item["keySessionId"]))
    return Told(_ws(item), target, AuditOp.REVOKED, item.get("revokedBy"), ActorKind.PERSON)


def _notes(item: Item) -> Told:
    user, _, session = item["sk"].removeprefix(keys.NOTES_PREFIX).rpartition("#")
    target = Target(AuditKind.NOTES, session, int(item["revision"]))
    return Told(_ws(item), target, AuditOp.WRITTEN, user, ActorKind.AGENT, item.get("admissionId"))


def _admission(item: Item) -> Told:
    target = Target(AuditKind.TURN, str(item["admissionId"]))
    user, session = item.get("userId"), item.get("keySessionId")
    return Told(str(item["workspaceId"]), target, AuditOp.ADMITTED, user, ActorKind.PERSON, None, session)


def _erasure(item: Item) -> Told:
    """Requested (the record), then completed (the receipt): by the owner, or by the pseudonym of a member
    who erased themself; never the erased member's id."""
    op = AuditOp.REQUESTED if item.get("status") == "running" else AuditOp.COMPLETED
    target = Target(AuditKind.ERASURE, str(item["erasureId"]))
    return Told(_ws(item), target, op, item.get("requestedBy"), ActorKind.PERSON)


def _export(item: Item) -> Told:
    target = Target(AuditKind.EXPORT, str(item["exportId"]))
    return Told(_ws(item), target, AuditOp.REQUESTED, item.get("requestedBy"), ActorKind.PERSON)


def _import(item: Item) -> Told:
    target = Target(AuditKind.IMPORT, str(item["importId"]))
    return Told(_ws(item), target, AuditOp.REQUESTED, item.get("requestedBy"), ActorKind.PERSON)


def _consolidation(item: Item) -> Told:
    """The owner's opt-in or opt-out (every write of the settings is one or the other: docs/decisions/0088)."""
    target = Target(AuditKind.CONSOLIDATION, keys.workspace_of(item["pk"]), int(item["revision"]))
    op = AuditOp.OPTED_IN if item.get("enabled") else AuditOp.OPTED_OUT
    return Told(_ws(item), target, op, item.get("updatedBy"), ActorKind.PERSON)


def _consolidation_run(item: Item) -> Told:
    target = Target(AuditKind.CONSOLIDATION_RUN, str(item["runId"]))
    return Told(_ws(item), target, AuditOp.REQUESTED, item.get("requestedBy"), ActorKind.PERSON)


def _page(item: Item) -> Told:
    revision = int(item["revision"])
    target = Target(AuditKind.PAGE, str(item["pageId"]), revision)
    return Told(_ws(item), target, AuditOp.CREATED if revision == 1 else AuditOp.REVISED)


def _filed(item: Item) -> Told:
    """Either side of a filing: the page's names the page, the entry's the entry (one event lists both)."""
    if "PAGEENTRY#" in str(item["sk"]):
        return Told(_ws(item), Target(AuditKind.PAGE, str(item["pageId"])), AuditOp.FILED)
    return Told(_ws(item), Target(AuditKind.ENTRY, str(item["entryId"])), AuditOp.FILED)


def _categories(item: Item) -> Told:
    return Told(_ws(item), Target(AuditKind.PAGE_CATEGORIES, _ws(item), int(item["revision"])), AuditOp.SET)


ITEM_TARGETS: dict[str, Callable[[Item], Told]] = {
    "erasure": _erasure,
    "document-version": _version,
    "entry": _entry,
    "entry-candidate": _candidate,
    "member": _member,
    "workspace": _workspace,
    "key-session": _key_session,
    "key-revocation": _revocation,
    "notes": _notes,
    "admission": _admission,
    "export": _export,
    "import": _import,
    "consolidation": _consolidation,
    "consolidation-run": _consolidation_run,
    "page": _page,
    "page-entry": _filed,
    "entry-filing": _filed,
    "page-categories": _categories,
}
"""Item kinds (the change feed's names) whose writes are actions, and what each says."""

ITEM_BOOKKEEPING = frozenset(
    {
        "policy",  # written by SetPolicyMode and a Clear's generation bump, audited through the verb
        "document-head",  # moves with the version it points at, which is audited
        "entry-revision",  # written with the head of its chain, which is audited
        "entry-key",
        "forgotten-source",  # written with the tombstone of the chain that drew on it, which is audited
        "entry-counter",
        "entry-key-secret",
        "entry-save",
        "entry-rate",
        "search-snapshot",
        "conversation",
        "credential-slot",
        "admission-key",
        "receipt",
        "audit",
        "export-part",  # an export's sealed files: the request and the download are the events
        "consolidation-record",  # ids and counts of a run: its proposals are the events
    }
)
