"""Committing a new version: one transaction creates the version item (never overwritten), moves the head
from exactly the caller's base version and starts the base's retention clock; the caller's own conditions
(write right, a fence) ride in the same transaction. The head carries the version's ciphertext, so a read
(and a recall) is one round trip."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from workspace_memory.document.versions import MAX_DOCUMENT_BYTES, Op, VersionInfo, document_context, utf8_size
from workspace_memory.governance.redaction import Finding
from workspace_memory.kernel.clock import DAY_SECONDS, epoch_seconds, iso
from workspace_memory.kernel.errors import Conflict, PayloadTooLarge
from workspace_memory.kernel.sealed import seal
from workspace_memory.store import document_queries
from workspace_memory.store.changes import (
    Change,
    Create,
    ExpireVersion,
    Label,
    MoveHead,
    RetentionIs,
)
from workspace_memory.store.document_records import VersionRecord
from workspace_memory.store.ports import Cipher, Table, TransactionCancelled
from workspace_memory.store.workspace_records import history_days_of as history_days_of


@dataclass(frozen=True)
class Commit:
    """The receipt of a committed version: ids, sizes and hashes, never text."""

    version: VersionInfo
    clear_generation: int | None = None
    warnings: tuple[Finding, ...] = ()
    """A human's text is stored as typed: what redaction would have removed from it, per kind
    (docs/architecture.md#redaction)."""


@dataclass(frozen=True)
class PreparedVersion:
    """A new version encrypted, as the commit transaction writes it (the version and the head at it)."""

    workspace_id: str
    record: VersionRecord
    info: VersionInfo
    at: float
    """When the version was made: the moment its base stopped being the head."""


def prepare_version(
    cipher: Cipher,
    workspace_id: str,
    *,
    content: str,
    base: int,
    op: Op,
    author: str,
    now: float,
    restored_from: int | None = None,
    admission_id: str | None = None,
    turn_id: str | None = None,
) -> PreparedVersion:
    size = utf8_size(content)
    if size > MAX_DOCUMENT_BYTES:
        raise PayloadTooLarge(f"document is {size} bytes; the cap is {MAX_DOCUMENT_BYTES}", limit=MAX_DOCUMENT_BYTES)
    number = base + 1
    sealed = seal(cipher, content, document_context(workspace_id, number))
    ciphertext, digest = sealed.ciphertext, sealed.sha256
    record = VersionRecord(
        version=number,
        op=op.value,
        author=author,
        created_at=iso(now),
        bytes=size,
        sha256=digest,
        ciphertext=ciphertext,
        base_version=base,
        restored_from=restored_from,
        admission_id=admission_id,
        turn_id=turn_id,
    )
    return PreparedVersion(workspace_id, record, VersionInfo.of(record), now)


def version_changes(prepared: PreparedVersion, base: int, history_days: int) -> list[Change]:
    """The writes that make a version: create it, move the head from exactly `base`, and start the retention
    clock of `base`, which stops being the head now (the head's own version never expires). The base version
    must exist, so a base that expired is refused here as well as by the head's condition."""
    workspace_id, record = prepared.workspace_id, prepared.record
    changes: list[Change] = [
        Create(record.to_item(workspace_id), Label.VERSION),
        MoveHead(record.head_item(workspace_id), base),
    ]
    if base > 0:
        superseded_at = prepared.info.created_at
        ttl = expiry(superseded_at, history_days)
        changes.append(ExpireVersion(prepared.workspace_id, base, ttl, superseded_at, int(prepared.at), Label.HEAD))
    return changes


def expiry(superseded_at: str, history_days: int) -> int:
    """The `ttl` of a version that stopped being the head at `superseded_at`: `history_days` later."""
    return epoch_seconds(superseded_at) + history_days * DAY_SECONDS


def read_history_days(table: Table, workspace_id: str) -> int:
    """The workspace's retention, read on its own (one GetItem of its item)."""
    return document_queries.history_days(table, workspace_id)


def transact_under_retention(
    table: Table,
    changes: Callable[[int], Sequence[Change]],
    history_days: int,
    moved: Callable[[TransactionCancelled], int | None],
) -> int:
    """Transact `changes(history_days)`: writes that expire a superseded version under that retention and check,
    in the same transaction, that it is still the workspace's. When the cancellation is that check alone, a
    retention change landed in between: `moved` says so by answering the retention now in force (None: anything
    else refused the writes, and the cancellation is raised), and the writes go once more under it. A second
    cancellation is raised as it is. Returns the retention the writes landed under."""
    try:
        table.transact(changes(history_days))
        return history_days
    except TransactionCancelled as exc:
        fresh = moved(exc)
        if fresh is None:
            raise
    table.transact(changes(fresh))
    return fresh


def commit_version(
    table: Table, prepared: PreparedVersion, base: int, history_days: int | None, others: Sequence[Change]
) -> int:
    """Commit `prepared` on `base` with `others` in one transaction that also checks the retention used for the
    base's expiry is still the workspace's (`None`: not known yet, read it first). If only that check fails, a
    retention change landed in between: read it and try once more. Returns the retention the commit used."""
    workspace_id = prepared.workspace_id

    def changes(days: int) -> list[Change]:
        return [*version_changes(prepared, base, days), RetentionIs(workspace_id, days), *others]

    def moved(exc: TransactionCancelled) -> int | None:
        return read_history_days(table, workspace_id) if exc.failed() == {Label.RETENTION} else None

    days = read_history_days(table, workspace_id) if history_days is None else history_days
    try:
        return transact_under_retention(table, changes, days, moved)
    except TransactionCancelled as exc:
        if exc.failed() == {Label.RETENTION}:  # only the second try can fail on the retention alone
            raise Conflict("the workspace's retention changed concurrently; try again") from None
        raise
