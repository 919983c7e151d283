"""A version of the workspace memory document as it is stored and read: every change to the one Markdown text
is an immutable, encrypted version item, kept for the workspace's retention once it stops being the head."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from enum import StrEnum

from workspace_memory.kernel.errors import InvalidInput, VersionNotFound, VersionPurged
from workspace_memory.kernel.sealed import unseal
from workspace_memory.store import keys
from workspace_memory.store.head import Head
from workspace_memory.store.paging import query_all
from workspace_memory.store.ports import Cipher, Item, Table

MAX_DOCUMENT_BYTES = 64 * 1024
"""Storage cap: two copies (head + version) of the ciphertext stay far below DynamoDB's 400 KB item."""


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


def all_versions(table: Table, workspace_id: str, page_size: int = 100) -> Iterator[Item]:
    """Every stored version item of the workspace, oldest first, page by page."""
    return query_all(table, keys.ws(workspace_id), keys.VERSION_PREFIX, page_size=page_size)


def head_text(cipher: Cipher, workspace_id: str, head: Head) -> str:
    """The head's text (empty for a document never saved)."""
    if head.ciphertext is None:
        return ""
    return unseal(cipher, head.ciphertext, document_context(workspace_id, head.version))
