"""The workspace memory document: one Markdown text, every change an immutable, encrypted version.

A new version is committed by one transaction: the version item is created (never overwritten), the head
moves from exactly the caller's base version, and the caller still holds write right. The head carries
the version's ciphertext, so a read (and a recall) is one round trip.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from workspace_memory import keys
from workspace_memory.access import Caller, load_caller
from workspace_memory.changes import BumpClearGeneration, Change, Create, Label, MemberCanWrite, MoveHead
from workspace_memory.clock import Clock, iso
from workspace_memory.cursors import query_page
from workspace_memory.errors import (
    Forbidden,
    InvalidInput,
    PayloadTooLarge,
    StaleBaseVersion,
    Unavailable,
    VersionNotFound,
    WorkspaceNotFound,
)
from workspace_memory.policy import Mode, Policy
from workspace_memory.ports import Cipher, Item, Table, TransactionCancelled
from workspace_memory.sealed import seal, unseal

MAX_DOCUMENT_BYTES = 64 * 1024
"""Storage cap: two copies (head + version) of the ciphertext stay far below DynamoDB's 400 KB item."""

RECALL_MAX_BYTES = 8192


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
class Head:
    version: int
    ciphertext: bytes | None
    sha256: str | None
    bytes: int
    updated_at: str | None
    updated_by: str | None
    tombstone: bool

    @classmethod
    def from_item(cls, item: Item | None) -> Head:
        if item is None:
            return cls(0, None, None, 0, None, None, False)
        return cls(
            version=int(item["headVersion"]),
            ciphertext=item.get("ciphertext"),
            sha256=item.get("sha256"),
            bytes=int(item.get("bytes", 0)),
            updated_at=item.get("updatedAt"),
            updated_by=item.get("updatedBy"),
            tombstone=bool(item.get("tombstone", False)),
        )


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
        )


@dataclass(frozen=True)
class Commit:
    """The receipt of a committed version: ids, sizes and hashes, never text."""

    version: VersionInfo
    clear_generation: int | None = None


@dataclass(frozen=True)
class HistoryPage:
    versions: list[VersionInfo]
    next_cursor: str | None


@dataclass(frozen=True)
class PreparedVersion:
    """A new version encrypted and laid out as the two items the commit transaction writes."""

    version_item: Item
    head_item: Item
    info: VersionInfo


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
) -> PreparedVersion:
    size = utf8_size(content)
    if size > MAX_DOCUMENT_BYTES:
        raise PayloadTooLarge(f"document is {size} bytes; the cap is {MAX_DOCUMENT_BYTES}", limit=MAX_DOCUMENT_BYTES)
    number = base + 1
    sealed = seal(cipher, content, document_context(workspace_id, number))
    ciphertext, digest = sealed.ciphertext, sealed.sha256
    created = iso(now)
    info = VersionInfo(number, op.value, author, created, size, digest, restored_from)
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
    return PreparedVersion(version_item, head_item, info)


def version_changes(prepared: PreparedVersion, base: int) -> list[Change]:
    """The two writes that make a version: create it, and move the head from exactly `base`."""
    return [Create(prepared.version_item, Label.VERSION), MoveHead(prepared.head_item, base)]


def head_text(cipher: Cipher, workspace_id: str, head: Head) -> str:
    """The head's text (empty for a document never saved)."""
    if head.ciphertext is None:
        return ""
    return unseal(cipher, head.ciphertext, document_context(workspace_id, head.version))


class DocumentService:
    def __init__(self, table: Table, cipher: Cipher, clock: Clock) -> None:
        self._table = table
        self._cipher = cipher
        self._clock = clock

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
        versions = [VersionInfo.from_item(i) for i in items]
        return HistoryPage(versions, next_cursor)

    def read_version(self, user_id: str, workspace_id: str, number: int) -> tuple[VersionInfo, str]:
        _, (item,) = load_caller(self._table, workspace_id, user_id, [keys.version(workspace_id, number)])
        if item is None:
            raise VersionNotFound(f"version {number} does not exist")
        return VersionInfo.from_item(item), unseal(
            self._cipher, item["ciphertext"], document_context(workspace_id, number)
        )

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
        try:
            self._table.transact([*version_changes(prepared, base), MemberCanWrite(workspace_id, user_id)])
        except TransactionCancelled as exc:
            if Label.ACCESS in exc.failed():
                raise self._no_write_right(workspace_id, user_id) from None
            raise self._stale(workspace_id, base) from None
        return Commit(prepared.info)

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
        if item is None:
            raise VersionNotFound(f"version {restore_version} does not exist")
        old = unseal(self._cipher, item["ciphertext"], document_context(workspace_id, restore_version))
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
        try:
            self._table.transact([*version_changes(prepared, base), caller.still_writer(), *extra])
        except TransactionCancelled as exc:
            if Label.ACCESS in exc.failed():
                raise self._no_write_right(workspace_id, caller.user_id) from None
            raise self._stale(workspace_id, base) from None
        return Commit(prepared.info)

    def _stale(self, workspace_id: str, base: int) -> StaleBaseVersion | WorkspaceNotFound:
        """A refused head move: a stale base (409 with the current version), or a deleted workspace's tombstone
        (404, as every route answers for it)."""
        head = Head.from_item(self._table.get(*keys.head(workspace_id)))
        if head.tombstone:
            return WorkspaceNotFound("workspace not found")
        return StaleBaseVersion(f"base version {base} is not the current version", current_version=head.version)

    def _no_write_right(self, workspace_id: str, user_id: str) -> Exception:
        """A non-member learns nothing (404); a member without write right is told so (403)."""
        try:
            load_caller(self._table, workspace_id, user_id)
        except WorkspaceNotFound as exc:
            return exc
        return Forbidden("write access to this workspace's memory is not granted to your role")
