"""The entry records spell the items exactly as stored (docs/data-model.md): every item the entries context
writes reads back into its record and out again unchanged, and the pagers walk a prefix page by page."""

from __future__ import annotations

import pytest

from tests.memory_table import MemoryTable
from workspace_memory.kernel.terms import CandidateKind, EntryScope, EntryStatus
from workspace_memory.store import entry_queries, keys
from workspace_memory.store.entry_records import CandidateRecord, EntryRecord, Tombstone, head_of
from workspace_memory.store.ports import Item

pytestmark = pytest.mark.unit

WS = "ws_1"
SHA = "ab" * 32


def revision_item(entry_id: str = "en_1", revision: int = 1, **extra: object) -> Item:
    return {
        **keys.as_key(keys.entry_revision(WS, entry_id, revision)),
        "entryId": entry_id,
        "revision": revision,
        "previousRevision": revision - 1,
        "scope": "workspace",
        "scopeOwner": "-",
        "type": "fact",
        "status": "active",
        "ciphertext": b"sealed",
        "sha256": SHA,
        "validFrom": "2027-01-15T08:00:00.000Z",
        "author": "olivia",
        "authorKind": "human",
        **extra,
    }


def test_a_revision_reads_back_and_out_unchanged() -> None:
    bare = revision_item()
    assert EntryRecord.from_item(bare).revision_item(WS) == bare
    full = revision_item(
        revision=2,
        status="superseded",
        authorKind="agent",
        admissionId="adm_1",
        keyLookup="lookup",
        keySlot="slot",
        supersededAt="2027-01-16T08:00:00.000Z",
        supersededBy=3,
        ttl=1_800_000_000,
    )
    record = EntryRecord.from_item(full)
    assert (record.status, record.superseded_by, record.key_slot) == (EntryStatus.SUPERSEDED, 3, "slot")
    assert record.revision_item(WS) == full


def test_a_head_carries_the_read_counts_and_its_revision_does_not() -> None:
    head = {**revision_item(), **keys.as_key(keys.entry(WS, "en_1")), "readCount": 3, "lastReadAt": "2027-01-15Z"}
    record = head_of(head)
    assert isinstance(record, EntryRecord)
    assert record.head_item(WS) == head
    assert "readCount" not in record.revision_item(WS)


def test_a_tombstone_reads_back_and_out_unchanged() -> None:
    item = {
        **keys.as_key(keys.entry(WS, "en_1")),
        "entryId": "en_1",
        "revision": 4,
        "scope": "member",
        "scopeOwner": "vera",
        "status": "forgotten",
        "forgottenAt": "2027-01-15T08:00:00.000Z",
        "forgottenBy": "olivia",
    }
    record = head_of(item)
    assert isinstance(record, Tombstone)
    assert (record.status, record.scope) == (EntryStatus.FORGOTTEN, EntryScope.MEMBER)
    assert record.head_item(WS) == item
    assert head_of(None) is None


def candidate_item(**extra: object) -> Item:
    return {
        **keys.as_key(keys.entry_candidate(WS, "ec_1")),
        "candidateId": "ec_1",
        "revision": 1,
        "status": "pending",
        "scope": "workspace",
        "scopeOwner": "-",
        "type": "rule",
        "proposedBy": "olivia",
        "createdAt": "2027-01-15T08:00:00.000Z",
        "ttl": 1_800_000_000,
        **extra,
    }


@pytest.mark.parametrize(
    "item",
    [
        candidate_item(ciphertext=b"sealed"),
        candidate_item(ciphertext=b"sealed", admissionId="adm_1", entryId="en_1", baseRevision=2),
        candidate_item(kind="forget", admissionId="adm_1", entryId="en_1", baseRevision=2),
        candidate_item(revision=2, status="accepted", decidedBy="olivia", decidedAt="2027-01-15T09:00:00.000Z"),
    ],
    ids=["save", "save of a revision", "forget", "decided"],
)
def test_a_candidate_reads_back_and_out_unchanged(item: Item) -> None:
    record = CandidateRecord.from_item(item)
    assert record.kind is (CandidateKind.FORGET if "kind" in item else CandidateKind.SAVE)
    assert record.to_item(WS) == item


def test_the_pagers_walk_a_prefix_in_order_from_a_position() -> None:
    table = MemoryTable()
    for n in range(5):
        table.put({**revision_item(f"en_{n}"), **keys.as_key(keys.entry(WS, f"en_{n}"))})
    for revision in (1, 2, 3):
        table.put(revision_item("en_0", revision))
    heads = list(entry_queries.entry_heads(table, WS, page=2))
    assert [h.entry_id for _, h in heads] == [f"en_{n}" for n in range(5)]
    after = [h.entry_id for _, h in entry_queries.entry_heads(table, WS, after=heads[1][0], page=2)]
    assert after == ["en_2", "en_3", "en_4"]
    newest = entry_queries.entry_revisions(table, WS, "en_0", page=2, newest_first=True)
    assert [r.revision for r in newest] == [3, 2, 1]
    assert entry_queries.entry_revision(table, WS, "en_0", 2) == EntryRecord.from_item(revision_item("en_0", 2))
    assert entry_queries.entry_head(table, WS, "en_9") is None
