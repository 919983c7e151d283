"""What each file of an export holds (docs/decisions/0068), read from the table and decrypted: plain rows whose
fields are camelCase on the wire, serialized deterministically (sorted keys, rows in id order), so an export
run again over the same data gives byte-identical files and the same manifest.

Who sees what: a `me` export holds only what the requester authored or owns (versions they wrote, their
private entries, their notes, key sessions and conversations' receipts); a `workspace` export (the owner's)
holds everything shared plus the owner's own private entries, never another member's."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from typing import Any

from pydantic.alias_generators import to_camel

from workspace_memory.document.versions import document_context, head_text
from workspace_memory.entries.model import entry_context
from workspace_memory.kernel.clock import Clock
from workspace_memory.kernel.sealed import unseal
from workspace_memory.kernel.terms import EntryScope, ExportFile, ExportScope
from workspace_memory.store import document_queries, export_queries, keys
from workspace_memory.store.document_records import Policy
from workspace_memory.store.entry_records import EntryRecord
from workspace_memory.store.export_records import ExportRecord
from workspace_memory.store.ports import Cipher, Table
from workspace_memory.store.workspace_records import Workspace
from workspace_memory.turns.notes import Notebook, notes_context


def canonical(value: object) -> str:
    """The one serialization of a file's JSON: what its SHA-256 in the manifest is taken of."""
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def _wire(row: object) -> dict[str, Any]:
    return {to_camel(name): value for name, value in asdict(row).items()}  # type: ignore[call-overload]


@dataclass(frozen=True)
class VersionRow:
    version: int
    op: str
    author: str
    created_at: str
    bytes: int
    base_version: int | None
    restored_from: int | None
    admission_id: str | None
    turn_id: str | None
    superseded_at: str | None
    purged: bool
    purged_at: str | None
    purged_by: str | None
    content: str | None


@dataclass(frozen=True)
class EntryRow:
    entry_id: str
    revision: int
    scope: str
    scope_owner: str
    type: str
    status: str
    valid_from: str
    author: str
    author_kind: str
    superseded_at: str | None
    superseded_by: int | None
    fields: dict[str, Any]


@dataclass(frozen=True)
class NotesRow:
    session_id: str
    revision: int
    updated_at: str | None
    text: str


@dataclass(frozen=True)
class KeySessionRow:
    key_session_id: str
    scopes: list[str] | None
    expires_at: int
    revoked_at: str | None


@dataclass(frozen=True)
class ReceiptRow:
    conversation_id: str
    admission_id: str
    turn_id: str | None
    at: str
    status: str
    revision: int | None
    entries: list[str]
    selected: list[str]


@dataclass(frozen=True)
class MemberRow:
    user_id: str
    role: str


@dataclass(frozen=True)
class PolicyRow:
    mode: str
    revision: int
    clear_generation: int


@dataclass(frozen=True)
class RetentionRow:
    history_days: int
    agent_days: int


@dataclass(frozen=True)
class Built:
    """A file's text and how many records it holds."""

    text: str
    count: int


ENTRY_FIELDS = ("key", "title", "summary", "body", "sources", "reason", "previously")
"""What of an entry revision's sealed text an archive keeps (not its search vector, derived from the text)."""


class ExportFiles:
    def __init__(self, table: Table, cipher: Cipher, clock: Clock) -> None:
        self._table = table
        self._cipher = cipher
        self._clock = clock
        self._builders: dict[ExportFile, Callable[[ExportRecord], Built]] = {
            ExportFile.DOCUMENTS: self._documents,
            ExportFile.DOCUMENT_MD: self._document_md,
            ExportFile.ENTRIES: self._entries,
            ExportFile.NOTES: self._notes,
            ExportFile.KEY_SESSIONS: self._key_sessions,
            ExportFile.RECEIPTS: self._receipts,
            ExportFile.POLICY: self._policy,
            ExportFile.MEMBERS: self._members,
            ExportFile.RETENTION: self._retention,
        }

    def build(self, export: ExportRecord, file: ExportFile) -> Built:
        return self._builders[file](export)

    def _documents(self, export: ExportRecord) -> Built:
        ws, now, rows = export.workspace_id, self._clock.now(), []
        for record in document_queries.versions(self._table, ws):
            mine = export.scope is ExportScope.WORKSPACE or record.author == export.requested_by
            if not mine or record.expired(now):
                continue
            content = None
            if record.ciphertext is not None:
                content = unseal(self._cipher, record.ciphertext, document_context(ws, record.version))
            rows.append(
                VersionRow(
                    version=record.version,
                    op=record.op,
                    author=record.author,
                    created_at=record.created_at,
                    bytes=record.bytes,
                    base_version=record.base_version,
                    restored_from=record.restored_from,
                    admission_id=record.admission_id,
                    turn_id=record.turn_id,
                    superseded_at=record.superseded_at,
                    purged=record.ciphertext is None,
                    purged_at=record.purged_at,
                    purged_by=record.purged_by,
                    content=content,
                )
            )
        return _rows(rows)

    def _document_md(self, export: ExportRecord) -> Built:
        head = document_queries.head(self._table, export.workspace_id)
        text = head_text(self._cipher, export.workspace_id, head)
        return Built(text, 1 if text else 0)

    def _visible(self, export: ExportRecord, record: EntryRecord) -> bool:
        private = record.scope is EntryScope.MEMBER
        if export.scope is ExportScope.ME:
            return private and record.scope_owner == export.requested_by
        return not private or record.scope_owner == export.requested_by

    def _entries(self, export: ExportRecord) -> Built:
        ws, now, rows = export.workspace_id, self._clock.now(), []
        for record in export_queries.entry_revisions(self._table, ws):
            if not self._visible(export, record) or (record.ttl is not None and record.ttl <= now):
                continue
            context = entry_context(ws, record.entry_id, record.revision)
            sealed = json.loads(unseal(self._cipher, record.ciphertext, context))
            rows.append(
                EntryRow(
                    entry_id=record.entry_id,
                    revision=record.revision,
                    scope=record.scope.value,
                    scope_owner=record.scope_owner,
                    type=record.type.value,
                    status=record.status.value,
                    valid_from=record.valid_from,
                    author=record.author,
                    author_kind=record.author_kind,
                    superseded_at=record.superseded_at,
                    superseded_by=record.superseded_by,
                    fields={name: sealed[name] for name in ENTRY_FIELDS if sealed.get(name) is not None},
                )
            )
        return _rows(rows)

    def _notes(self, export: ExportRecord) -> Built:
        ws, user, now, rows = export.workspace_id, export.requested_by, self._clock.now(), []
        for session, record in export_queries.notes(self._table, ws, user):
            if record.expired(now):
                continue
            context = notes_context(Notebook(ws, user, session), record.revision)
            text = unseal(self._cipher, record.ciphertext, context)
            rows.append(NotesRow(session, record.revision, record.updated_at, text))
        return _rows(rows)

    def _key_sessions(self, export: ExportRecord) -> Built:
        ws, now, rows = export.workspace_id, self._clock.now(), []
        for record in export_queries.key_sessions(self._table, ws):
            if record.opened_by != export.requested_by or record.expired(now):
                continue
            revoked = export_queries.revocation(self._table, ws, record.key_session_id)
            scopes = None if record.scopes is None else sorted(scope.value for scope in record.scopes)
            rows.append(
                KeySessionRow(
                    record.key_session_id, scopes, record.expires_at, None if revoked is None else revoked.revoked_at
                )
            )
        return _rows(rows)

    def _receipts(self, export: ExportRecord) -> Built:
        ws, now, rows = export.workspace_id, self._clock.now(), []
        for conversation in export_queries.conversations_of(self._table, ws, export.requested_by):
            for record in export_queries.receipts(self._table, conversation):
                if record.workspace_id != ws or record.ttl <= now:
                    continue
                rows.append(
                    ReceiptRow(
                        conversation_id=conversation,
                        admission_id=record.admission_id,
                        turn_id=record.turn_id,
                        at=record.at,
                        status=record.status.value,
                        revision=record.revision,
                        entries=list(record.entries),
                        selected=list(record.selected),
                    )
                )
        return _rows(rows)

    def _policy(self, export: ExportRecord) -> Built:
        policy = Policy.from_item(self._table.get(*keys.policy(export.workspace_id)))
        return _one(PolicyRow(policy.mode.value, policy.revision, policy.clear_generation))

    def _members(self, export: ExportRecord) -> Built:
        members = export_queries.members(self._table, export.workspace_id)
        return _rows([MemberRow(member.user_id, member.role.value) for member in members])

    def _retention(self, export: ExportRecord) -> Built:
        meta = Workspace.of(self._table.get(*keys.meta(export.workspace_id)))
        return _one(RetentionRow(0, 0) if meta is None else RetentionRow(meta.history_days, meta.agent_days))


def _rows(rows: Iterable[object]) -> Built:
    wire = [_wire(row) for row in rows]
    return Built(canonical(wire), len(wire))


def _one(row: object) -> Built:
    return Built(canonical(_wire(row)), 1)
