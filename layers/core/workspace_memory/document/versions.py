"""A version of the workspace memory document as it is stored and read: every change to the one Markdown text
is an immutable, encrypted version item, kept for the workspace's retention once it stops being the head."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from workspace_memory.kernel.errors import InvalidInput, VersionNotFound, VersionPurged
from workspace_memory.kernel.sealed import unseal
from workspace_memory.store.document_records import VersionRecord
from workspace_memory.store.head import Head
from workspace_memory.store.ports import Cipher, Item
from workspace_memory.store.record_fields import expired

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
    def of(cls, record: VersionRecord) -> VersionInfo:
        return cls(
            version=record.version,
            op=record.op,
            author=record.author,
            created_at=record.created_at,
            bytes=record.bytes,
            ciphertext_sha256=record.sha256,
            restored_from=record.restored_from,
            purged_at=record.purged_at,
            purged_by=record.purged_by,
            admission_id=record.admission_id,
            turn_id=record.turn_id,
        )


is_expired = expired
"""An item past its `ttl`: the search context judges its snapshot pointer and entry metadata by it."""


def retained_version(found: VersionRecord | None, number: int, now: float) -> tuple[VersionRecord, bytes]:
    """A version that can be read, and its ciphertext: a missing or expired one is 404, a purged stub 410."""
    if found is None or found.expired(now):
        raise VersionNotFound(f"version {number} does not exist")
    if found.ciphertext is None:
        raise VersionPurged(f"version {number} was purged")
    return found, found.ciphertext


def retained(item: Item | None, number: int, now: float) -> tuple[VersionRecord, bytes]:
    """`retained_version` of a version item as read (the entries context's citations read it so)."""
    return retained_version(VersionRecord.of(item), number, now)


def head_text(cipher: Cipher, workspace_id: str, head: Head) -> str:
    """The head's text (empty for a document never saved)."""
    if head.ciphertext is None:
        return ""
    return unseal(cipher, head.ciphertext, document_context(workspace_id, head.version))
