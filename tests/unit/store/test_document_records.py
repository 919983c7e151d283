"""The document records spell the items exactly as stored (docs/data-model.md): every item the document
context writes reads back into its record and out again unchanged, an optional attribute that is not set is
not stored, and the queries read them in order."""

from __future__ import annotations

import pytest

from tests.memory_table import MemoryTable
from workspace_memory.kernel.terms import EntryStatus, Mode
from workspace_memory.store import document_queries, keys
from workspace_memory.store.document_records import Policy, RevisionExpiry, VersionRecord
from workspace_memory.store.ports import Item
from workspace_memory.store.record_fields import expired

pytestmark = pytest.mark.unit

WS = "ws_1"
SHA = "ab" * 32
AT = "2027-01-15T08:00:00.000Z"


def version_item(number: int = 1, **extra: object) -> Item:
    return {
        **keys.as_key(keys.version(WS, number)),
        "version": number,
        "ciphertext": b"sealed",
        "sha256": SHA,
        "bytes": 12,
        "op": "save",
        "author": "olivia",
        "baseVersion": number - 1,
        "createdAt": AT,
        **extra,
    }


def test_a_new_version_reads_back_and_out_unchanged() -> None:
    item = version_item()
    record = VersionRecord.from_item(item)
    assert (record.version, record.ciphertext, record.base_version, record.ttl) == (1, b"sealed", 0, None)
    assert record.to_item(WS) == item


def test_a_version_with_every_optional_attribute_reads_back_and_out_unchanged() -> None:
    item = version_item(
        4,
        op="undo",
        restoredFrom=2,
        admissionId="adm_1",
        turnId="t1",
        supersededAt=AT,
        ttl=1_800_000_000,
    )
    assert VersionRecord.from_item(item).to_item(WS) == item
    stub = {name: value for name, value in item.items() if name != "ciphertext"}
    stub |= {"purgedAt": AT, "purgedBy": "olivia"}
    record = VersionRecord.from_item(stub)
    assert (record.ciphertext, record.purged_by) == (None, "olivia")
    assert record.to_item(WS) == stub


def test_unset_optionals_are_not_stored() -> None:
    record = VersionRecord(version=2, op="save", author="olivia", created_at=AT, bytes=3, sha256=SHA)
    assert set(record.to_item(WS)) == {"pk", "sk", "version", "sha256", "bytes", "op", "author", "createdAt"}
    assert VersionRecord.of(None) is None


def test_the_head_is_the_versions_copy() -> None:
    record = VersionRecord.from_item(version_item(3))
    assert record.head_item(WS) == {
        **keys.as_key(keys.head(WS)),
        "headVersion": 3,
        "ciphertext": b"sealed",
        "sha256": SHA,
        "bytes": 12,
        "op": "save",
        "updatedAt": AT,
        "updatedBy": "olivia",
        "tombstone": False,
    }


def test_a_version_past_its_ttl_is_expired() -> None:
    record = VersionRecord.from_item(version_item(ttl=100))
    assert record.expired(100)
    assert not record.expired(99)
    assert not VersionRecord.from_item(version_item()).expired(10**12)
    assert expired(version_item(ttl=100), 100)
    assert not expired(version_item(), 100)


def test_a_policy_reads_back_and_out_unchanged_and_a_missing_one_is_the_default() -> None:
    item = {**keys.as_key(keys.policy(WS)), "mode": "auto", "policyRevision": 3, "clearGeneration": 1}
    policy = Policy.from_item(item)
    assert policy == Policy(Mode.AUTO, 3, 1)
    assert policy.to_item(WS) == item
    assert Policy.from_item({**item, "updatedAt": AT, "updatedBy": "olivia"}) == policy
    assert Policy.from_item(None) == Policy(Mode.READ_ONLY, 0, 0)


def test_an_entry_revisions_expiry_times_read_back_and_out_unchanged() -> None:
    item = {
        **keys.as_key(keys.entry_revision(WS, "en_1", 2)),
        "entryId": "en_1",
        "revision": 2,
        "status": "superseded",
        "supersededAt": AT,
        "ttl": 1_800_000_000,
    }
    record = RevisionExpiry.from_item(item)
    assert (record.status, record.ttl) == (EntryStatus.SUPERSEDED, 1_800_000_000)
    assert record.to_item(WS) == item
    active = RevisionExpiry("en_1", 3, EntryStatus.ACTIVE, None, None)
    assert "supersededAt" not in active.to_item(WS)
    assert "ttl" not in active.to_item(WS)
    assert active.expired(10**12) is False


def test_the_queries_read_the_versions_in_order_and_the_revisions_without_text() -> None:
    table = MemoryTable()
    assert document_queries.head(table, WS).version == 0
    records = [VersionRecord.from_item(version_item(n)) for n in range(1, 4)]
    for record in records:
        table.put(record.to_item(WS))
    table.put(records[-1].head_item(WS))
    table.put({**keys.as_key(keys.meta(WS)), "historyDays": 30})
    revision = {**keys.as_key(keys.entry_revision(WS, "en_1", 1)), "entryId": "en_1", "revision": 1}
    table.put({**revision, "status": "active", "ciphertext": b"sealed"})
    assert list(document_queries.versions(table, WS, page_size=2)) == records
    page, cursor = document_queries.version_page(table, WS, limit=2, cursor=None)
    assert page == [records[2], records[1]]
    assert cursor is not None
    assert document_queries.version_page(table, WS, limit=2, cursor=cursor) == ([records[0]], None)
    assert document_queries.head(table, WS).version == 3
    assert document_queries.history_days(table, WS) == 30
    assert list(document_queries.revision_expiries(table, WS)) == [
        RevisionExpiry("en_1", 1, EntryStatus.ACTIVE, None, None)
    ]
