"""The document head as the domain reads it: the current version, its ciphertext and who made it."""

from __future__ import annotations

from dataclasses import dataclass

from workspace_memory.store.ports import Item


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
        """A missing head is the document never saved: version 0, no text."""
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
