"""The audit trail by construction (docs/architecture.md#the-audit-trail): every transaction that changes
what a workspace holds or who may touch it carries its own audit event, written in the same transaction.

No service writes an audit event. `AuditedTable` wraps the table port and appends to each transaction the event
`audit_of` derives from its changes: the items it writes (by kind, through `store/audit_items.ITEM_TARGETS`) and
the verbs that change an item in place (`VERB_TARGETS`). Who acted comes from the transaction itself: the actor an
item names (an author, whoever opened or revoked or decided), else the member its access check names; a turn's
admission check names the turn, a key session's check the agent's session. Bookkeeping (counters, snapshots,
expiries, idempotency records, receipts) is listed in `BOOKKEEPING` and audits nothing; a change of a type or an
item of a kind in neither list fails tests/unit/governance/test_audit_trail.py, so a new write cannot slip past the
trail. The event stands or falls with the write: a refused transaction leaves no event, a landed one always has its
event."""

from __future__ import annotations

import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from workspace_memory.kernel.clock import DAY_SECONDS
from workspace_memory.kernel.terms import ActorKind, AuditKind, AuditOp
from workspace_memory.store import changes as ch
from workspace_memory.store.audit_items import ITEM_TARGETS, Told
from workspace_memory.store.audit_records import AuditRecord, Target
from workspace_memory.store.changes.base import ItemWrite
from workspace_memory.store.feed_images import rule_for

if TYPE_CHECKING:
    from workspace_memory.kernel.clock import Clock
    from workspace_memory.store.ports import Table

DEFAULT_AUDIT_DAYS = 365


def _policy(change: ch.SetPolicyMode) -> Told:
    target = Target(AuditKind.POLICY, change.workspace_id, change.expected + 1)
    return Told(change.workspace_id, target, change.mode, change.by, ActorKind.PERSON)


def _retention(change: ch.SetRetention) -> Told:
    """Either window, or both: the history window is the target's id `history`, the agents' `agent`; the
    version is the new number of days (the first window set names the event)."""
    windows = (("history", change.history_days), ("agent", change.agent_days))
    name, days = next((name, days) for name, days in windows if days is not None)
    return Told(change.workspace_id, Target(AuditKind.RETENTION, name, days), AuditOp.SET)


def _consent(change: ch.SetAi) -> Told:
    target = Target(AuditKind.CONSENT, change.workspace_id, change.seen + 1)
    return Told(change.workspace_id, target, AuditOp.AI_ON if change.enabled else AuditOp.AI_OFF)


def _purge(change: ch.PurgeVersion) -> Told:
    target = Target(AuditKind.DOCUMENT, str(change.version), change.version)
    return Told(change.workspace_id, target, AuditOp.PURGE, change.by, ActorKind.PERSON)


def _mark(change: ch.MarkEntryHead) -> Told:
    target = Target(AuditKind.ENTRY, change.entry_id, change.base)
    if change.verified is not None:  # with evidence, an agent's (its turn's checks name the admission)
        kind = ActorKind.PERSON if change.evidence is None else ActorKind.AGENT
        return Told(change.workspace_id, target, AuditOp.VERIFIED, change.verified[1], kind)
    op = AuditOp.PINNED if change.pinned else AuditOp.UNPINNED
    return Told(change.workspace_id, target, op, None, ActorKind.PERSON)


def _tombstone(change: ch.TombstoneWorkspace) -> Told:
    target = Target(AuditKind.WORKSPACE, change.workspace_id)
    return Told(change.workspace_id, target, AuditOp.DELETED, change.by, ActorKind.PERSON)


def _download(change: ch.DownloadExport) -> Told:
    target = Target(AuditKind.EXPORT, change.export_id)
    return Told(change.workspace_id, target, AuditOp.DOWNLOADED, change.by, ActorKind.PERSON)


def _applied(change: ch.ApplyImport) -> Told:
    """One step of an import: the versions and entries it wrote are its targets, the owner who imports the actor
    (never the authors the archive names: they did not act now)."""
    target = Target(AuditKind.IMPORT, change.import_id)
    return Told(change.workspace_id, target, AuditOp.APPLIED, change.requested_by, ActorKind.PERSON)


def _completed(change: ch.CompleteImport) -> Told:
    target = Target(AuditKind.IMPORT, change.import_id)
    return Told(change.workspace_id, target, AuditOp.COMPLETED, change.requested_by, ActorKind.PERSON)


def _page_change(change: ch.DeletePage | ch.UnfileEntry) -> Told:
    """A page deleted at the revision seen, or an entry unfiled from it (the page's own write names its revision)."""
    if isinstance(change, ch.UnfileEntry):
        return Told(change.workspace_id, Target(AuditKind.PAGE, change.page_id), AuditOp.UNFILED)
    return Told(change.workspace_id, Target(AuditKind.PAGE, change.page_id, change.expected), AuditOp.DELETED)


VERB_TARGETS: dict[type, Callable[..., Told]] = {
    ch.SetPolicyMode: _policy,
    ch.SetRetention: _retention,
    ch.SetAi: _consent,
    ch.PurgeVersion: _purge,
    ch.TombstoneWorkspace: _tombstone,
    ch.MarkEntryHead: _mark,
    ch.DownloadExport: _download,
    ch.ApplyImport: _applied,
    ch.CompleteImport: _completed,
    ch.DeletePage: _page_change,
    ch.UnfileEntry: _page_change,
}
"""Verbs that change an item in place and are actions of their own."""

BOOKKEEPING: frozenset[type] = frozenset(
    {
        ch.BumpClearGeneration,  # a Clear's policy half: its new version is the event
        ch.ExpireVersion,
        ch.ExpireEntryRevision,
        ch.SupersedeEntryRevision,
        ch.CountEntryVersions,
        ch.BumpEntriesRevision,
        ch.ExpireSearchSnapshot,
        ch.CountAgentWrite,
        ch.CountEntryRead,
        ch.Delete,  # deletions are parts of a forget or a purge, whose other changes are the event
        # checks, which write nothing
        ch.MemberCanWrite,
        ch.MemberIsOwner,
        ch.MemberExists,
        ch.ClearGenerationIs,
        ch.PolicyIs,
        ch.ConsentIs,
        ch.CredentialHeldBy,
        ch.ConsumeAdmission,
        ch.AdmissionLive,
        ch.KeySessionLive,
        ch.KeySessionNotRevoked,
        ch.HeadAt,
        ch.RetentionIs,
        ch.WorkspaceLive,
        ch.TombstoneHead,
        ch.EntriesRevisionIs,
        ch.EntryNotPinned,
        ch.EntryHeadIs,
        ch.RetireEntryRevision,  # the retired head is the event
        ch.SourceNotForgotten,
        ch.ExpireAgentEntry,  # a window change's rewrite of expiries: the SetRetention is the event
        ch.RemoveMember,  # an erasure's: its record is the event
        ch.RewriteAttributes,  # an erasure's batches: its record and receipt are the events
        ch.CountErased,
        ch.ExportRunning,
        ch.FinishExport,  # the export workflow's end: the request and the download are the events
        ch.Absent,
        ch.BeginImport,  # an import's start: its record is the event
        ch.ImportHolds,
        ch.EndImport,  # an import's end: its completion is the event
    }
)
"""Change types that are never an action of their own (checks, counters, expiries, parts of a larger change)."""


def _told(change: ch.Change) -> Told | None:
    if isinstance(change, ItemWrite):
        rule = rule_for(change.item["pk"], change.item["sk"])
        read = None if rule is None else ITEM_TARGETS.get(rule.kind)
        return None if read is None else read(change.item)
    verb = VERB_TARGETS.get(type(change))
    return None if verb is None else verb(change)


@dataclass(frozen=True)
class Context:
    """Who a transaction's checks say is acting: the member, a turn's admission, an agent's key session."""

    member: str | None = None
    turn: str | None = None
    key_session: str | None = None
    turn_user: str | None = None


def _context(changes: Sequence[ch.Change]) -> Context:
    member = turn = session = turn_user = None
    for change in changes:
        match change:
            case ch.MemberCanWrite(user_id=user) | ch.MemberIsOwner(user_id=user) | ch.MemberExists(user_id=user):
                member = member or user
            case (
                ch.ConsumeAdmission(admission_id=admission, user_id=user)
                | ch.AdmissionLive(admission_id=admission, user_id=user)
            ):
                turn, turn_user = admission, user
            case ch.KeySessionLive(key_session_id=found) | ch.KeySessionNotRevoked(key_session_id=found):
                session = found
    return Context(member, turn, session, turn_user)


def audit_of(changes: Sequence[ch.Change], now: float, retention_days: int) -> AuditRecord | None:
    """The audit event of one transaction, or None when it is bookkeeping only. The first action names the
    event's kind and op; every action's target is listed."""
    told = [found for found in map(_told, changes) if found is not None]
    if not told:
        return None
    # A person's decision on a candidate is the action, whatever else its transaction writes (the entry it
    # accepts); otherwise the first change names it.
    decided = [t for t in told if t.target.kind is AuditKind.CANDIDATE and t.op != AuditOp.PROPOSED]
    first, context = (decided or told)[0], _context(changes)
    agent = context.turn is not None or context.key_session is not None
    kind = first.actor_kind or (ActorKind.AGENT if agent and first.target.kind is not AuditKind.TURN else None)
    actor = first.actor or context.member or context.turn_user
    admission = first.target.id if first.target.kind is AuditKind.TURN else first.admission_id or context.turn
    return AuditRecord(
        workspace_id=first.workspace_id,
        at_ms=int(now * 1000),
        tail=secrets.token_hex(6),
        kind=first.target.kind,
        op=first.op,
        actor=actor,
        actor_kind=kind or ActorKind.PERSON,
        targets=tuple(dict.fromkeys(found.target for found in [first, *told])),
        ttl=int(now) + retention_days * DAY_SECONDS,
        admission_id=admission,
        key_session=first.key_session or context.key_session,
    )


class AuditedTable:
    """The table port, every transaction of which carries its audit event (see the module docstring). Reads
    and the unconditional `put` (which no service uses for a person's or an agent's change) pass through."""

    def __init__(self, table: Table, clock: Clock, retention_days: int = DEFAULT_AUDIT_DAYS) -> None:
        self._table = table
        self._clock = clock
        self._retention_days = retention_days
        self.get = table.get
        self.get_many = table.get_many
        self.query = table.query
        self.put = table.put
        self.member_keys = table.member_keys
        self.workspace_keys = table.workspace_keys

    def transact(self, changes: Sequence[ch.Change]) -> None:
        record = audit_of(changes, self._clock.now(), self._retention_days)
        if record is None:
            self._table.transact(changes)
            return
        self._table.transact([*changes, ch.Create(record.to_item(), ch.Label.AUDIT)])
