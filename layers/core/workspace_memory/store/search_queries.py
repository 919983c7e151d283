"""Reading what the search needs: every retained revision's metadata (a projected Query, page after page),
the revisions it must open, and the search snapshot's pointer, chunks and keys."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import islice

from workspace_memory.store import keys
from workspace_memory.store.entry_records import EntryRecord
from workspace_memory.store.paging import query_all
from workspace_memory.store.ports import Table
from workspace_memory.store.search_records import REVISION_METADATA, RevisionMetadata, SnapshotChunk, SnapshotPointer


def revision_metadata(table: Table, workspace_id: str, *, page_size: int) -> Iterator[RevisionMetadata]:
    """Every stored revision's metadata (expired ones included: the caller judges), `page_size` a page. DynamoDB's
    1 MB page limit counts the items as stored, before the projection: `query_all` runs until an empty page."""
    pages = query_all(
        table, keys.ws(workspace_id), keys.ENTRY_REVISION_PREFIX, page_size=page_size, attributes=REVISION_METADATA
    )
    for item in pages:
        yield RevisionMetadata.from_item(item)


def revisions(table: Table, wanted: Sequence[RevisionMetadata]) -> list[EntryRecord | None]:
    """The full revisions (with their ciphertext) of `wanted`, in one consistent read; None for one forgotten
    since the Query."""
    return [None if item is None else EntryRecord.from_item(item) for item in table.get_many([m.key for m in wanted])]


def snapshot_pointer(table: Table, workspace_id: str, expected: int) -> SnapshotPointer | None:
    """The snapshot pointer, if there is one in format `expected`."""
    return SnapshotPointer.of(table.get(*keys.search_snapshot(workspace_id)), expected)


def snapshot_chunks(table: Table, workspace_id: str, generation: str, count: int) -> list[SnapshotChunk]:
    """Up to the `count` chunks of a generation, in order (fewer: a forget is removing them). A Query page holds
    at most 1 MB, two or three chunks; the listing stops at `count`."""
    prefix = keys.search_snapshot_chunks_prefix(generation)
    chunks = query_all(table, keys.ws(workspace_id), prefix, page_size=count)
    return [SnapshotChunk.from_item(item) for item in islice(chunks, count)]


def snapshot_keys(table: Table, workspace_id: str, limit: int) -> list[keys.Key]:
    """The keys of up to `limit` snapshot items of the workspace (pointer and chunks of every generation)."""
    found = table.query(
        keys.ws(workspace_id), keys.SEARCH_SNAPSHOT_PREFIX, limit=limit, newest_first=False, attributes=()
    )
    return [(item["pk"], item["sk"]) for item in found]


def snapshot_expiries(table: Table, workspace_id: str, *, page_size: int) -> Iterator[tuple[keys.Key, int | None]]:
    """Every snapshot item of the workspace (pointer and chunks of every generation) with its `ttl`."""
    found = query_all(
        table, keys.ws(workspace_id), keys.SEARCH_SNAPSHOT_PREFIX, page_size=page_size, attributes=("ttl",)
    )
    for item in found:
        yield (item["pk"], item["sk"]), None if item.get("ttl") is None else int(item["ttl"])
