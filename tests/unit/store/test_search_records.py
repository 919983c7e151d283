"""The search records spell the items exactly as stored (docs/data-model.md): the snapshot's pointer and chunks
read back into their records and out again unchanged, a revision's projected metadata reads into its record,
and the search queries walk what they name."""

from __future__ import annotations

import pytest

from tests.memory_table import MemoryTable
from workspace_memory.kernel.terms import EntryScope, EntryStatus, EntryType
from workspace_memory.store import keys, search_queries
from workspace_memory.store.entry_records import EntryRecord
from workspace_memory.store.ports import Item
from workspace_memory.store.search_records import (
    REVISION_METADATA,
    RevisionMetadata,
    SnapshotChunk,
    SnapshotPointer,
    entries_revision,
)

pytestmark = pytest.mark.unit

WS = "ws_1"
SHA = "ab" * 32
GENERATION = "000000000007-0a1b2c3d"


def revision(
    entry_id: str, number: int, status: EntryStatus = EntryStatus.ACTIVE, superseded_at: str | None = None
) -> EntryRecord:
    ttl = None if superseded_at is None else 50
    return EntryRecord(
        entry_id,
        number,
        EntryScope.MEMBER,
        "olivia",
        EntryType.FACT,
        status,
        b"sealed",
        SHA,
        "2027-01-15Z",
        "olivia",
        superseded_at=superseded_at,
        ttl=ttl,
    )


def test_a_pointer_reads_back_and_out_unchanged() -> None:
    pointer = SnapshotPointer(1, GENERATION, 7, 2, 40, 500_000, SHA, 1_800_000_000)
    item = pointer.to_item(WS)
    assert item == {
        **keys.as_key(keys.search_snapshot(WS)),
        "format": 1,
        "generation": GENERATION,
        "entriesRevision": 7,
        "chunks": 2,
        "docs": 40,
        "bytes": 500_000,
        "sha256": SHA,
        "ttl": 1_800_000_000,
        "complete": True,
    }
    assert SnapshotPointer.of(item, 1) == pointer
    assert (pointer.expired(1_799_999_999), pointer.expired(1_800_000_000)) == (False, True)


def test_a_pointer_written_before_reindexing_reads_as_complete_and_an_incomplete_one_as_incomplete() -> None:
    pointer = SnapshotPointer(1, GENERATION, 7, 2, 40, 500_000, SHA, 1_800_000_000)
    older = {k: v for k, v in pointer.to_item(WS).items() if k != "complete"}
    assert SnapshotPointer.of(older, 1) == pointer
    partial = SnapshotPointer(1, GENERATION, 7, 2, 40, 500_000, SHA, 1_800_000_000, complete=False)
    assert SnapshotPointer.of(partial.to_item(WS), 1) == partial


def test_a_pointer_of_another_format_or_none_reads_as_none() -> None:
    assert SnapshotPointer.of(None, 1) is None
    assert SnapshotPointer.of({**keys.as_key(keys.search_snapshot(WS)), "format": 2}, 1) is None
    assert SnapshotPointer.of({**keys.as_key(keys.search_snapshot(WS))}, 1) is None  # before formats


def test_a_chunk_reads_back_and_out_unchanged() -> None:
    chunk = SnapshotChunk(GENERATION, 3, b"\x00part", 99)
    item = chunk.to_item(WS)
    assert item == {
        **keys.as_key(keys.search_snapshot_chunk(WS, GENERATION, 3)),
        "generation": GENERATION,
        "part": b"\x00part",
        "ttl": 99,
    }
    assert SnapshotChunk.from_item(item) == chunk


def test_revision_metadata_reads_what_the_projection_keeps_and_leaves_unset_ones_unset() -> None:
    item: Item = {
        name: value for name, value in revision("en_1", 2).revision_item(WS).items() if name in REVISION_METADATA
    }
    meta = RevisionMetadata.from_item({**item, **keys.as_key(keys.entry_revision(WS, "en_1", 2))})
    assert meta.key == keys.entry_revision(WS, "en_1", 2)
    assert (meta.at, meta.scope, meta.type, meta.status) == (
        ("en_1", 2),
        EntryScope.MEMBER,
        EntryType.FACT,
        EntryStatus.ACTIVE,
    )
    assert (meta.superseded_at, meta.ttl, meta.expired(10**12)) == (None, None, False)


def test_the_counter_names_the_entries_revision() -> None:
    assert entries_revision(None) == 0
    assert entries_revision({**keys.as_key(keys.entry_counter(WS))}) == 0
    assert entries_revision({**keys.as_key(keys.entry_counter(WS)), "entriesRevision": 12}) == 12


def test_the_queries_walk_revisions_and_snapshot_items() -> None:
    table = MemoryTable()
    superseded = revision("en_1", 1, EntryStatus.SUPERSEDED, "2027-01-16Z")
    for record in (superseded, revision("en_1", 2), revision("en_2", 1)):
        table.put(record.revision_item(WS))
    listed = list(search_queries.revision_metadata(table, WS, page_size=2))
    assert [m.at for m in listed] == [("en_1", 1), ("en_1", 2), ("en_2", 1)]
    assert (listed[0].superseded_at, listed[0].ttl, listed[0].expired(50)) == ("2027-01-16Z", 50, True)
    assert search_queries.revisions(table, listed[:2]) == [superseded, revision("en_1", 2)]
    table.put(SnapshotPointer(1, GENERATION, 7, 2, 3, 10, SHA, 99).to_item(WS))
    for n in range(3):
        table.put(SnapshotChunk(GENERATION, n, bytes([n]), 99).to_item(WS))
    pointer = search_queries.snapshot_pointer(table, WS, 1)
    assert pointer is not None
    assert pointer.chunks == 2
    assert [c.part for c in search_queries.snapshot_chunks(table, WS, GENERATION, pointer.chunks)] == [b"\0", b"\1"]
    assert len(search_queries.snapshot_keys(table, WS, 100)) == 4
