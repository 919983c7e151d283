"""Document items as the document context reads and writes them (docs/data-model.md): a version
(`DOC#V#{n}`, created once, later given its expiry or turned into a stub), the head (`DOC#HEAD`, the current
version's copy: `store/head.py` reads it), the policy (`POLICY`), and the expiry times of an entry revision that
the retention rewrite reads.

Each record spells its own attribute names (`from_item`, `to_item`); the domain never does. What a condition
says of them stays in `store/changes` and its adapters. An optional attribute that is not set is not stored
at all (no nulls). `document_queries` reads them."""

from __future__ import annotations

import builtins
from dataclasses import dataclass

from workspace_memory.kernel.terms import EntryStatus, Mode
from workspace_memory.store import keys
from workspace_memory.store.ports import Item
from workspace_memory.store.record_fields import optional_int, present


@dataclass(frozen=True)
class VersionRecord:
    """A version of the document. `ciphertext` is None for a stub (a purged version keeps its number, op,
    author, creation time, size and hash, with `purged_at`/`purged_by`); `superseded_at` and `ttl` are set once
    it stops being the head."""

    version: int
    op: str
    author: str
    created_at: str
    bytes: int
    sha256: str
    ciphertext: builtins.bytes | None = None
    base_version: int | None = None
    restored_from: int | None = None
    admission_id: str | None = None
    turn_id: str | None = None
    superseded_at: str | None = None
    ttl: int | None = None
    purged_at: str | None = None
    purged_by: str | None = None

    @classmethod
    def of(cls, item: Item | None) -> VersionRecord | None:
        return None if item is None else cls.from_item(item)

    @classmethod
    def from_item(cls, item: Item) -> VersionRecord:
        return cls(
            version=int(item["version"]),
            op=item["op"],
            author=item["author"],
            created_at=item["createdAt"],
            bytes=int(item["bytes"]),
            sha256=item["sha256"],
            ciphertext=item.get("ciphertext"),
            base_version=optional_int(item.get("baseVersion")),
            restored_from=optional_int(item.get("restoredFrom")),
            admission_id=item.get("admissionId"),
            turn_id=item.get("turnId"),
            superseded_at=item.get("supersededAt"),
            ttl=optional_int(item.get("ttl")),
            purged_at=item.get("purgedAt"),
            purged_by=item.get("purgedBy"),
        )

    def to_item(self, workspace_id: str) -> Item:
        return {
            **keys.as_key(keys.version(workspace_id, self.version)),
            **present(
                {
                    "version": self.version,
                    "ciphertext": self.ciphertext,
                    "sha256": self.sha256,
                    "bytes": self.bytes,
                    "op": self.op,
                    "author": self.author,
                    "baseVersion": self.base_version,
                    "createdAt": self.created_at,
                    "restoredFrom": self.restored_from,
                    "admissionId": self.admission_id,
                    "turnId": self.turn_id,
                    "supersededAt": self.superseded_at,
                    "ttl": self.ttl,
                    "purgedAt": self.purged_at,
                    "purgedBy": self.purged_by,
                }
            ),
        }

    def head_item(self, workspace_id: str) -> Item:
        """The document head at this version: its copy of the ciphertext, so a read is one round trip."""
        return {
            **keys.as_key(keys.head(workspace_id)),
            "headVersion": self.version,
            "ciphertext": self.ciphertext,
            "sha256": self.sha256,
            "bytes": self.bytes,
            "op": self.op,
            "updatedAt": self.created_at,
            "updatedBy": self.author,
            "tombstone": False,
        }

    def expired(self, now: float) -> bool:
        """Past its retention: gone, whether or not DynamoDB's TTL deleter has removed it yet (it may take days)."""
        return self.ttl is not None and self.ttl <= now


@dataclass(frozen=True)
class Policy:
    """The workspace memory policy. A missing row reads as `read_only`, revision 0, clear generation 0. The
    row's `updatedAt`/`updatedBy` are written by the mode change (`SetPolicyMode`) and never read."""

    mode: Mode
    revision: int
    clear_generation: int

    @classmethod
    def from_item(cls, item: Item | None) -> Policy:
        if item is None:
            return cls(Mode.READ_ONLY, 0, 0)
        return cls(Mode(item["mode"]), int(item["policyRevision"]), int(item["clearGeneration"]))

    def to_item(self, workspace_id: str) -> Item:
        return {
            **keys.as_key(keys.policy(workspace_id)),
            "mode": self.mode.value,
            "policyRevision": self.revision,
            "clearGeneration": self.clear_generation,
        }


REVISION_EXPIRY_ATTRIBUTES = ("entryId", "revision", "status", "supersededAt", "ttl")
"""What the retention rewrite reads of an entry revision: never its ciphertext."""


@dataclass(frozen=True)
class RevisionExpiry:
    """An entry revision's status and expiry times, as the retention rewrite reads them (a projection)."""

    entry_id: str
    revision: int
    status: EntryStatus | None
    superseded_at: str | None
    ttl: int | None

    @classmethod
    def from_item(cls, item: Item) -> RevisionExpiry:
        status = item.get("status")
        return cls(
            entry_id=item["entryId"],
            revision=int(item["revision"]),
            status=None if status is None else EntryStatus(status),
            superseded_at=item.get("supersededAt"),
            ttl=optional_int(item.get("ttl")),
        )

    def to_item(self, workspace_id: str) -> Item:
        return {
            **keys.as_key(keys.entry_revision(workspace_id, self.entry_id, self.revision)),
            **present(
                {
                    "entryId": self.entry_id,
                    "revision": self.revision,
                    "status": None if self.status is None else self.status.value,
                    "supersededAt": self.superseded_at,
                    "ttl": self.ttl,
                }
            ),
        }

    def expired(self, now: float) -> bool:
        return self.ttl is not None and self.ttl <= now
