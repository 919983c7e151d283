"""What an import writes (docs/decisions/0069), as steps: each a batch of items built from an archive's rows,
sealed under the target workspace's branch key with the encryption context of the slot it lands in. Steps are
planned from the rows alone (their order and sizes), so a retried step is the same step, recorded once.

Kept from the archive: every id, number, author, op, time and text. Made anew: the ciphertexts and their
digests, the entry key slots (HMACs under the target's own key secret), the expiries (the archive's retention
applied to its times), member rows' write right (the target's share type). Not kept: search vectors (search
embeds what has none), read counts, pins and verifications (not in an archive)."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from workspace_memory.document.versions import document_context
from workspace_memory.entries.forgotten_sources import source_slots
from workspace_memory.entries.key_secret import KeySecret
from workspace_memory.entries.model import EntryText, Previously, Source, agent_expiry, entry_context
from workspace_memory.kernel.clock import DAY_SECONDS, epoch_seconds
from workspace_memory.kernel.sealed import seal
from workspace_memory.kernel.terms import EntryScope, EntryStatus, ExportFile, Role
from workspace_memory.store.document_records import Policy, VersionRecord
from workspace_memory.store.entry_records import EntryRecord, key_slot_item
from workspace_memory.store.ports import Cipher, Item
from workspace_memory.store.workspace_records import MemberRecord, Workspace
from workspace_memory.workspaces.import_archive import Contents
from workspace_memory.workspaces.import_rows import EntryIn, VersionIn

BATCH_ROWS = 30
"""Rows per step, each at most three items (an entry revision, its chain's head, its key slot): under
TransactWriteItems' 100 with the step's record and the workspace check beside them."""
BATCH_TEXT_BYTES = 2_000_000
"""Plaintext per step: its ciphertexts stay under TransactWriteItems' 4 MB."""


@dataclass(frozen=True)
class Step:
    """One batch: its name (recorded once applied), its items and what it counts."""

    name: str
    items: list[Item]
    counts: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Target:
    workspace: Workspace
    requested_by: str
    now: str


class ImportWrites:
    def __init__(self, cipher: Cipher, key_secret: KeySecret) -> None:
        self._cipher = cipher
        self._key_secret = key_secret

    def steps(self, file: ExportFile, contents: Contents, target: Target) -> Iterator[Step]:
        """The steps of one file, in order; each built only when reached (a resumed file skips sealing none)."""
        ws = target.workspace
        if file is ExportFile.MEMBERS:
            writers = ws.writer_roles()
            rows = [row for row in contents.members if row.user_id != target.requested_by]
            items = [MemberRecord(r.user_id, r.role, r.role in writers, target.now).to_item(ws.id) for r in rows]
            yield Step("members", items, {"members": len(contents.members)})
        elif file is ExportFile.POLICY:
            policy = contents.policy
            yield Step("policy", [Policy(policy.mode, policy.revision, policy.clear_generation).to_item(ws.id)])
        elif file is ExportFile.DOCUMENTS:
            last = contents.versions[-1].version if contents.versions else None
            for number, versions in enumerate(_batches(contents.versions, lambda row: row.bytes)):
                items = [item for row in versions for item in self._version_items(ws, row, row.version == last)]
                yield Step(f"documents#{number}", items, {"versions": len(versions)})
        elif file is ExportFile.ENTRIES:
            heads = {row.entry_id: row.revision for row in contents.entries}
            for number, batch in enumerate(_batches(contents.entries, _fields_bytes)):
                ends = [row for row in batch if heads[row.entry_id] == row.revision]
                items = [item for row in batch for item in self._revision_items(ws, row, row in ends)]
                yield Step(f"entries#{number}", items, {"chains": len(ends), "revisions": len(batch)})

    def _version_items(self, ws: Workspace, row: VersionIn, last: bool) -> list[Item]:
        """The version, and with the last one the document's head."""
        record = self._version(ws, row)
        return [record.to_item(ws.id), *([record.head_item(ws.id)] if last else [])]

    def _version(self, ws: Workspace, row: VersionIn) -> VersionRecord:
        ciphertext, sha256 = None, ""
        if row.content is not None:
            sealed = seal(self._cipher, row.content, document_context(ws.id, row.version))
            ciphertext, sha256 = sealed.ciphertext, sealed.sha256
        ttl = None if row.superseded_at is None else epoch_seconds(row.superseded_at) + ws.history_days * DAY_SECONDS
        return VersionRecord(
            version=row.version,
            op=row.op,
            author=row.author,
            created_at=row.created_at,
            bytes=row.bytes,
            sha256=sha256,
            ciphertext=ciphertext,
            base_version=row.base_version,
            restored_from=row.restored_from,
            admission_id=row.admission_id,
            turn_id=row.turn_id,
            superseded_at=row.superseded_at,
            ttl=ttl,
            purged_at=row.purged_at,
            purged_by=row.purged_by,
        )

    def _revision_items(self, ws: Workspace, row: EntryIn, head: bool) -> list[Item]:
        """The revision; with a chain's last one its head and, while active with a key, its key slot."""
        record = self._revision(ws, row)
        items = [record.revision_item(ws.id)]
        if head:
            items.append(record.head_item(ws.id))
            if record.key_slot is not None and record.status is EntryStatus.ACTIVE:
                items.append(key_slot_item(ws.id, record.key_slot, record.entry_id))
        return items

    def _revision(self, ws: Workspace, row: EntryIn) -> EntryRecord:
        fields = row.fields
        before = fields.previously
        text = EntryText(
            fields.title,
            fields.summary,
            fields.body,
            tuple(Source.of(source.model_dump()) for source in fields.sources),
            fields.key,
            fields.reason,
            None if before is None else Previously(before.summary, before.until),
        )
        sealed = seal(self._cipher, text.plaintext(), entry_context(ws.id, row.entry_id, row.revision))
        key = fields.key
        ttl = None
        if row.superseded_at is not None:
            ttl = epoch_seconds(row.superseded_at) + ws.history_days * DAY_SECONDS
        elif row.author_kind == "agent" and row.status is EntryStatus.ACTIVE:
            ttl = agent_expiry(row.valid_from, ws.agent_days)
        return EntryRecord(
            entry_id=row.entry_id,
            revision=row.revision,
            scope=row.scope,
            scope_owner=row.scope_owner,
            type=row.type,
            status=row.status,
            ciphertext=sealed.ciphertext,
            sha256=sealed.sha256,
            valid_from=row.valid_from,
            author=row.author,
            author_kind=row.author_kind,
            key_lookup=None if key is None else self._key_secret.lookup(ws.id, key),
            key_slot=None if key is None else self._key_secret.slot(ws.id, row.scope, row.scope_owner, key),
            superseded_at=row.superseded_at,
            superseded_by=row.superseded_by,
            ttl=ttl,
            source_slots=source_slots(self._key_secret, ws.id, text.sources, None),
        )


def entry_counts(contents: Contents) -> dict[str | None, int]:
    """The stored entry versions an import leaves, counted as the cap counts them: shared ones together (None),
    each member's private ones apart (by member)."""
    return Counter(row.scope_owner if row.scope is EntryScope.MEMBER else None for row in contents.entries)


def owners_other_than(contents: Contents, requested_by: str) -> list[str]:
    return [row.user_id for row in contents.members if row.role is Role.OWNER and row.user_id != requested_by]


def _fields_bytes(row: EntryIn) -> int:
    return len(json.dumps(row.fields.model_dump(), ensure_ascii=False).encode("utf-8"))


T = TypeVar("T")


def _batches(rows: Sequence[T], weigh: Callable[[T], int]) -> Iterator[list[T]]:
    """Rows in order, cut where a batch would pass `BATCH_ROWS` rows or `BATCH_TEXT_BYTES` of text."""
    batch: list[T] = []
    weight = 0
    for row in rows:
        size = weigh(row)
        if batch and (len(batch) >= BATCH_ROWS or weight + size > BATCH_TEXT_BYTES):
            yield batch
            batch, weight = [], 0
        batch.append(row)
        weight += size
    if batch:
        yield batch
