"""Items as the search context reads and writes them (docs/data-model.md): what the projected Query of the entry
revisions (`ENTRYREV#…`) shows of each (never its ciphertext: the full revision is `EntryRecord`), the
`entriesRevision` of the workspace's entry counter (`ENTRIES`), and the search snapshot's pointer
(`SEARCHSNAP#HEAD`) and chunks (`SEARCHSNAP#{generation}#{part}`).

Each record spells its own attribute names (`from_item`, `to_item`); the domain never does. What a condition
says of them stays in `store/changes` and its adapters. An optional attribute that is not set is not stored
at all (no nulls). `search_queries` reads them. What a snapshot's sealed blob holds (its rows) is the search's
own serialisation, not attributes: it stays in `search/search_snapshot.py`."""

from __future__ import annotations

from dataclasses import dataclass

from workspace_memory.kernel.terms import EntryScope, EntryStatus, EntryType
from workspace_memory.store import keys
from workspace_memory.store.ports import Item

REVISION_METADATA = ("entryId", "revision", "scope", "scopeOwner", "type", "status", "validFrom", "supersededAt", "ttl")
"""The attributes the projected Query reads of each revision to decide what the index needs: never ciphertext."""


@dataclass(frozen=True)
class RevisionMetadata:
    """A retained revision as the projected Query shows it: enough to judge it (visibility, validity, expiry)
    and to fetch it (`key`) when the index does not hold it yet."""

    key: keys.Key
    entry_id: str
    revision: int
    scope: EntryScope
    scope_owner: str
    type: EntryType
    status: EntryStatus
    valid_from: str
    superseded_at: str | None = None
    ttl: int | None = None

    @classmethod
    def from_item(cls, item: Item) -> RevisionMetadata:
        ttl = item.get("ttl")
        return cls(
            key=(item["pk"], item["sk"]),
            entry_id=item["entryId"],
            revision=int(item["revision"]),
            scope=EntryScope(item["scope"]),
            scope_owner=item["scopeOwner"],
            type=EntryType(item["type"]),
            status=EntryStatus(item["status"]),
            valid_from=item["validFrom"],
            superseded_at=item.get("supersededAt"),
            ttl=None if ttl is None else int(ttl),
        )

    @property
    def at(self) -> tuple[str, int]:
        """The revision's identity: (entry id, revision)."""
        return self.entry_id, self.revision

    def expired(self, now: float) -> bool:
        """Past its retention: gone, whether or not DynamoDB's TTL deleter has removed it yet."""
        return self.ttl is not None and self.ttl <= now


def entries_revision(counter: Item | None) -> int:
    """The workspace's `entriesRevision` from its `ENTRIES` counter item (0 before the first entry write)."""
    return 0 if counter is None else int(counter.get("entriesRevision", 0))


@dataclass(frozen=True)
class SnapshotPointer:
    """Which snapshot generation is current: at which `entries_revision`, in how many chunks, how many documents
    and bytes, the ciphertext's SHA-256, and its `format` (a reader skips one it does not know)."""

    format: int
    generation: str
    entries_revision: int
    chunks: int
    docs: int
    bytes: int
    sha256: str
    ttl: int
    complete: bool = True
    """False while an owner's reindex is still adding revisions (a pointer written before reindexing existed
    held every revision of its `entries_revision`)."""

    @classmethod
    def of(cls, item: Item | None, expected: int) -> SnapshotPointer | None:
        """The pointer if there is one in format `expected` (None for another format: its attributes may
        differ)."""
        if item is None or int(item.get("format", 0)) != expected:
            return None
        return cls(
            format=expected,
            generation=item["generation"],
            entries_revision=int(item["entriesRevision"]),
            chunks=int(item["chunks"]),
            docs=int(item["docs"]),
            bytes=int(item["bytes"]),
            sha256=item["sha256"],
            ttl=int(item["ttl"]),
            complete=bool(item.get("complete", True)),
        )

    def to_item(self, workspace_id: str) -> Item:
        return {
            **keys.as_key(keys.search_snapshot(workspace_id)),
            "format": self.format,
            "generation": self.generation,
            "entriesRevision": self.entries_revision,
            "chunks": self.chunks,
            "docs": self.docs,
            "bytes": self.bytes,
            "sha256": self.sha256,
            "ttl": self.ttl,
            "complete": self.complete,
        }

    def expired(self, now: float) -> bool:
        return self.ttl <= now


@dataclass(frozen=True)
class SnapshotChunk:
    """Part `number` of a generation's ciphertext."""

    generation: str
    number: int
    part: bytes
    ttl: int

    @classmethod
    def from_item(cls, item: Item) -> SnapshotChunk:
        number = int(str(item["sk"]).rpartition("#")[2])
        return cls(item["generation"], number, bytes(item["part"]), int(item["ttl"]))

    def to_item(self, workspace_id: str) -> Item:
        return {
            **keys.as_key(keys.search_snapshot_chunk(workspace_id, self.generation, self.number)),
            "generation": self.generation,
            "part": self.part,
            "ttl": self.ttl,
        }
