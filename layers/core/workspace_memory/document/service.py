"""The workspace memory document: one Markdown text, every change an immutable, encrypted version.

A new version is committed by one transaction: the version item is created (never overwritten), the head
moves from exactly the caller's base version, and the caller still holds write right. The head carries
the version's ciphertext, so a read (and a recall) is one round trip.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from enum import StrEnum

from workspace_memory.document.policy import Mode, Policy
from workspace_memory.governance.redaction import Finding, findings
from workspace_memory.kernel.clock import Clock, epoch_seconds, iso
from workspace_memory.kernel.errors import (
    Conflict,
    Forbidden,
    InvalidInput,
    PayloadTooLarge,
    Unavailable,
    VersionNotFound,
    VersionPurged,
    WorkspaceNotFound,
)
from workspace_memory.kernel.sealed import seal, unseal
from workspace_memory.store import keys
from workspace_memory.store.changes import (
    DEFAULT_HISTORY_DAYS,
    BumpClearGeneration,
    Change,
    Create,
    ExpireVersion,
    Label,
    MemberCanWrite,
    MoveHead,
    RetentionIs,
)
from workspace_memory.store.cursors import query_page
from workspace_memory.store.head import Head
from workspace_memory.store.paging import query_all
from workspace_memory.store.ports import Cipher, Item, Table, TransactionCancelled
from workspace_memory.store.stale import stale_base
from workspace_memory.workspaces.access import Caller, load_caller

MAX_DOCUMENT_BYTES = 64 * 1024
"""Storage cap: two copies (head + version) of the ciphertext stay far below DynamoDB's 400 KB item."""

RECALL_MAX_BYTES = 8192

DAY_SECONDS = 86400


class Op(StrEnum):
    SAVE = "save"
    CLEAR = "clear"
    UNDO = "undo"
    CAPTURE = "capture"


def document_context(workspace_id: str, version: int) -> dict[str, str]:
    return {"workspace": workspace_id, "kind": "document", "version": str(version)}


def utf8_size(text: str) -> int:
    """The UTF-8 size; text that has none (JSON can carry a lone surrogate) is refused as bad input."""
    try:
        return len(text.encode("utf-8"))
    except UnicodeEncodeError:
        raise InvalidInput("content must be valid Unicode text (no lone surrogates)") from None


@dataclass(frozen=True)
class DocumentView:
    version: int
    content: str
    bytes: int
    recall_eligible: bool
    updated_at: str | None
    updated_by: str | None


@dataclass(frozen=True)
class VersionInfo:
    version: int
    op: str
    author: str
    created_at: str
    bytes: int
    ciphertext_sha256: str
    restored_from: int | None = None
    purged_at: str | None = None
    purged_by: str | None = None
    admission_id: str | None = None
    """A capture's admission: with `turn_id`, which turn wrote the version (the frame's blame)."""
    turn_id: str | None = None

    @classmethod
    def from_item(cls, item: Item) -> VersionInfo:
        return cls(
            version=int(item["version"]),
            op=item["op"],
            author=item["author"],
            created_at=item["createdAt"],
            bytes=int(item["bytes"]),
            ciphertext_sha256=item["sha256"],
            restored_from=item.get("restoredFrom"),
            purged_at=item.get("purgedAt"),
            purged_by=item.get("purgedBy"),
            admission_id=item.get("admissionId"),
            turn_id=item.get("turnId"),
        )


def is_expired(item: Item, now: float) -> bool:
    """A version past its retention is gone, whether or not DynamoDB's TTL deleter has removed it yet (it may
    take days): every read judges `ttl` itself."""
    ttl = item.get("ttl")
    return ttl is not None and int(ttl) <= now


def retained(item: Item | None, number: int, now: float) -> tuple[Item, bytes]:
    """A version that can be read, and its ciphertext: a missing or expired one is 404, a purged stub 410."""
    if item is None or is_expired(item, now):
        raise VersionNotFound(f"version {number} does not exist")
    ciphertext: bytes | None = item.get("ciphertext")
    if ciphertext is None:
        raise VersionPurged(f"version {number} was purged")
    return item, ciphertext


@dataclass(frozen=True)
class Commit:
    """The receipt of a committed version: ids, sizes and hashes, never text."""

    version: VersionInfo
    clear_generation: int | None = None
    warnings: tuple[Finding, ...] = ()
    """A human's text is stored as typed: what redaction would have removed from it, per kind
    (docs/architecture.md#redaction)."""


@dataclass(frozen=True)
class HistoryPage:
    versions: list[VersionInfo]
    next_cursor: str | None


@dataclass(frozen=True)
class PreparedVersion:
    """A new version encrypted and laid out as the two items the commit transaction writes."""

    workspace_id: str
    version_item: Item
    head_item: Item
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
    created = iso(now)
    info = VersionInfo(
        number, op.value, author, created, size, digest, restored_from, admission_id=admission_id, turn_id=turn_id
    )
    version_item: Item = {
        **keys.as_key(keys.version(workspace_id, number)),
        "version": number,
        "ciphertext": ciphertext,
        "sha256": digest,
        "bytes": size,
        "op": op.value,
        "author": author,
        "baseVersion": base,
        "createdAt": created,
    }
    if restored_from is not None:
        version_item["restoredFrom"] = restored_from
    if admission_id is not None:
        version_item["admissionId"] = admission_id
    if turn_id is not None:
        version_item["turnId"] = turn_id
    head_item: Item = {
        **keys.as_key(keys.head(workspace_id)),
        "headVersion": number,
        "ciphertext": ciphertext,
        "sha256": digest,
        "bytes": size,
        "op": op.value,
        "updatedAt": created,
        "updatedBy": author,
        "tombstone": False,
    }
    return PreparedVersion(workspace_id, version_item, head_item, info, now)


def version_changes(prepared: PreparedVersion, base: int, history_days: int) -> list[Change]:
    """The writes that make a version: create it, move the head from exactly `base`, and start the retention
    clock of `base`, which stops being the head now (the head's own version never expires). The base version
    must exist, so a base that expired is refused here as well as by the head's condition."""
    changes: list[Change] = [Create(prepared.version_item, Label.VERSION), MoveHead(prepared.head_item, base)]
    if base > 0:
        superseded_at = prepared.info.created_at
        ttl = expiry(superseded_at, history_days)
        changes.append(ExpireVersion(prepared.workspace_id, base, ttl, superseded_at, int(prepared.at), Label.HEAD))
    return changes


def expiry(superseded_at: str, history_days: int) -> int:
    """The `ttl` of a version that stopped being the head at `superseded_at`: `history_days` later."""
    return epoch_seconds(superseded_at) + history_days * DAY_SECONDS


def all_versions(table: Table, workspace_id: str, page_size: int = 100) -> Iterator[Item]:
    """Every stored version item of the workspace, oldest first, page by page."""
    return query_all(table, keys.ws(workspace_id), keys.VERSION_PREFIX, page_size=page_size)


def history_days_of(meta: Item | None) -> int:
    """The retention a workspace item says (missing item or attribute: the default)."""
    return DEFAULT_HISTORY_DAYS if meta is None else int(meta.get("historyDays", DEFAULT_HISTORY_DAYS))


def read_history_days(table: Table, workspace_id: str) -> int:
    """The workspace's retention, read on its own (one GetItem of its item)."""
    return history_days_of(table.get(*keys.meta(workspace_id)))


def commit_version(
    table: Table, prepared: PreparedVersion, base: int, history_days: int | None, others: Sequence[Change]
) -> int:
    """Commit `prepared` on `base` with `others` in one transaction that also checks the retention used for the
    base's expiry is still the workspace's (`None`: not known yet, read it first). If only that check fails, a
    retention change landed in between: read it and try once more. Returns the retention the commit used."""
    workspace_id = prepared.workspace_id
    days = read_history_days(table, workspace_id) if history_days is None else history_days
    try:
        table.transact([*version_changes(prepared, base, days), RetentionIs(workspace_id, days), *others])
        return days
    except TransactionCancelled as exc:
        if exc.failed() != {Label.RETENTION}:
            raise
    days = read_history_days(table, workspace_id)
    try:
        table.transact([*version_changes(prepared, base, days), RetentionIs(workspace_id, days), *others])
    except TransactionCancelled as exc:
        if exc.failed() == {Label.RETENTION}:
            raise Conflict("the workspace's retention changed concurrently; try again") from None
        raise
    return days


def head_text(cipher: Cipher, workspace_id: str, head: Head) -> str:
    """The head's text (empty for a document never saved)."""
    if head.ciphertext is None:
        return ""
    return unseal(cipher, head.ciphertext, document_context(workspace_id, head.version))


RETENTION_CACHE_SIZE = 1024


class DocumentService:
    def __init__(self, table: Table, cipher: Cipher, clock: Clock) -> None:
        self._table = table
        self._cipher = cipher
        self._clock = clock
        self._history_days: dict[str, int] = {}
        """Workspace -> the retention last seen: lets a warm Save stay one call (its transaction re-checks it)."""

    def _remember(self, workspace_id: str, days: int) -> None:
        cache = self._history_days
        cache.pop(workspace_id, None)
        if len(cache) >= RETENTION_CACHE_SIZE:
            del cache[next(iter(cache))]  # the least recently stored
        cache[workspace_id] = days

    # -- reads -----------------------------------------------------------------------------------

    def read(self, user_id: str, workspace_id: str) -> DocumentView:
        _, (head_item, policy_item) = load_caller(
            self._table, workspace_id, user_id, [keys.head(workspace_id), keys.policy(workspace_id)]
        )
        head = Head.from_item(head_item)
        content = head_text(self._cipher, workspace_id, head)
        mode = Policy.from_item(policy_item).mode
        eligible = mode is not Mode.OFF and not head.tombstone and head.bytes <= RECALL_MAX_BYTES
        return DocumentView(head.version, content, head.bytes, eligible, head.updated_at, head.updated_by)

    def history(self, user_id: str, workspace_id: str, limit: int, cursor: str | None) -> HistoryPage:
        load_caller(self._table, workspace_id, user_id)
        items, next_cursor = query_page(
            self._table, keys.ws(workspace_id), keys.VERSION_PREFIX, limit=limit, cursor=cursor, newest_first=True
        )
        now = self._clock.now()
        # An expired version is left out (a page may hold fewer than `limit`); the cursor still resumes right.
        versions = [VersionInfo.from_item(i) for i in items if not is_expired(i, now)]
        return HistoryPage(versions, next_cursor)

    def read_version(self, user_id: str, workspace_id: str, number: int) -> tuple[VersionInfo, str]:
        _, (item,) = load_caller(self._table, workspace_id, user_id, [keys.version(workspace_id, number)])
        found, ciphertext = retained(item, number, self._clock.now())
        return VersionInfo.from_item(found), unseal(self._cipher, ciphertext, document_context(workspace_id, number))

    # -- writes ----------------------------------------------------------------------------------

    def save(self, user_id: str, workspace_id: str, content: str, base: int) -> Commit:
        """One round trip: write right and the base are conditions of the one transaction, not a read before
        it. Only a refusal reads, to say which: 404 for a non-member, 403 for a reader, 409 for a stale base."""
        try:
            prepared = prepare_version(
                self._cipher,
                workspace_id,
                content=content,
                base=base,
                op=Op.SAVE,
                author=user_id,
                now=self._clock.now(),
            )
        except Unavailable:
            # A workspace that does not exist has no branch key: answer as every route does for it (404).
            load_caller(self._table, workspace_id, user_id)
            raise
        cached = self._history_days.get(workspace_id)  # warm: no read; cold: commit_version reads it once
        try:
            days = commit_version(self._table, prepared, base, cached, [MemberCanWrite(workspace_id, user_id)])
        except TransactionCancelled as exc:
            if Label.ACCESS in exc.failed():
                raise self._no_write_right(workspace_id, user_id) from None
            raise stale_base(exc, workspace_id, base) from None  # the head it lost to
        self._remember(workspace_id, days)
        return Commit(prepared.info, warnings=findings(content))  # CPU only: the Save stays one call

    def clear(self, user_id: str, workspace_id: str, base: int) -> Commit:
        """An empty version and clearGeneration+1 in one transaction: proposals made before it die."""
        caller, (policy_item,) = load_caller(self._table, workspace_id, user_id, [keys.policy(workspace_id)])
        caller.require_write()
        seen = Policy.from_item(policy_item)
        commit = self._commit(
            caller, content="", base=base, op=Op.CLEAR, extra=[BumpClearGeneration(workspace_id, seen.clear_generation)]
        )
        return Commit(commit.version, seen.clear_generation + 1)

    def undo(self, user_id: str, workspace_id: str, restore_version: int, base: int) -> Commit:
        """Old content re-encrypted as a new version; generation and policy revision never rewind."""
        caller, (item,) = load_caller(self._table, workspace_id, user_id, [keys.version(workspace_id, restore_version)])
        caller.require_write()
        _, ciphertext = retained(item, restore_version, self._clock.now())
        old = unseal(self._cipher, ciphertext, document_context(workspace_id, restore_version))
        return self._commit(caller, content=old, base=base, op=Op.UNDO, restored_from=restore_version)

    def _commit(
        self,
        caller: Caller,
        *,
        content: str,
        base: int,
        op: Op,
        extra: Sequence[Change] = (),
        restored_from: int | None = None,
    ) -> Commit:
        workspace_id = caller.workspace.id
        prepared = prepare_version(
            self._cipher,
            workspace_id,
            content=content,
            base=base,
            op=op,
            author=caller.user_id,
            now=self._clock.now(),
            restored_from=restored_from,
        )
        days = caller.workspace.history_days  # read in the caller's snapshot, re-checked by the transaction
        try:
            days = commit_version(self._table, prepared, base, days, [caller.still_writer(), *extra])
        except TransactionCancelled as exc:
            if Label.ACCESS in exc.failed():
                raise self._no_write_right(workspace_id, caller.user_id) from None
            raise stale_base(exc, workspace_id, base) from None  # the head it lost to
        self._remember(workspace_id, days)
        return Commit(prepared.info)

    def _no_write_right(self, workspace_id: str, user_id: str) -> Exception:
        """A non-member learns nothing (404); a member without write right is told so (403)."""
        try:
            load_caller(self._table, workspace_id, user_id)
        except WorkspaceNotFound as exc:
            return exc
        return Forbidden("write access to this workspace's memory is not granted to your role")
