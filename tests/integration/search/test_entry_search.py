"""The search service against the moto server with real encryption: vectors sealed at write time, the warm
index keyed by the entries revision (one read when nothing changed), incremental rebuilds that decrypt only
new revisions, `asOf`, filters, and member-private entries that never surface for another member."""

from __future__ import annotations

import json

import pytest

from scripts.localstack.resources import LocalResources
from tests.integration.adapters.test_branch_keys import Calls
from tests.integration.entry_support import draft
from tests.support import drop_partition, new_user
from workspace_memory.bootstrap import Services, build_services
from workspace_memory.entries.model import Draft, EntryText, entry_context
from workspace_memory.kernel.sealed import unseal
from workspace_memory.kernel.settings import Settings
from workspace_memory.kernel.terms import EntryScope, EntryType
from workspace_memory.search.entry_search import SearchFilters
from workspace_memory.store import keys
from workspace_memory.workspaces.access import Role, ShareType

pytestmark = pytest.mark.integration


@pytest.fixture
def svc(settings: Settings) -> Services:
    return build_services(settings)


def scene(svc: Services) -> tuple[str, str, str]:
    owner, member = new_user("owner"), new_user("member")
    ws = svc.access.create_workspace(owner, "search", ShareType.SHARED)
    svc.access.put_member(owner, ws, member, Role.EDITOR)
    return owner, member, ws


def test_vectors_are_sealed_with_their_entry_at_write_time(svc: Services) -> None:
    owner, _, ws = scene(svc)
    entry_id = svc.entries.create(owner, ws, draft("Deploy window", "releases go out on Tuesdays")).entry_id
    item = svc.table.get(*keys.entry_revision(ws, entry_id, 1))
    assert item is not None
    sealed = json.loads(unseal(svc.cipher, item["ciphertext"], entry_context(ws, entry_id, 1), item.get("sha256")))
    assert sealed["vector"]["model"] == "wordllama-l2-supercat-256"
    assert len(sealed["vector"]["f16"]) > 500
    assert "Tuesdays" not in json.dumps({k: str(v) for k, v in item.items() if k != "ciphertext"})


def test_search_finds_by_meaning_and_by_word_and_keeps_private_entries_private(svc: Services) -> None:
    owner, member, ws = scene(svc)
    deploy = svc.entries.create(owner, ws, draft("Deploy window", "production releases happen on Tuesdays")).entry_id
    svc.entries.create(owner, ws, draft("Invoices", "the customer is billed in euros each month"))
    marker = "zanzibar-private-marker"
    private = svc.entries.create(
        member, ws, draft("My deploy notes", f"{marker} I deploy releases late", scope=EntryScope.MEMBER)
    ).entry_id
    assert [r.entry_id for r in svc.search.search(owner, ws, "Tuesdays", 5).results][:1] == [deploy]
    for query in (marker, "deploy releases", "my notes"):
        assert private not in [r.entry_id for r in svc.search.search(owner, ws, query, 20).results]
    assert private in [r.entry_id for r in svc.search.search(member, ws, marker, 5).results]


def test_a_warm_search_reads_once_and_a_change_decrypts_only_the_new_revision(settings: Settings) -> None:
    svc = build_services(settings)
    owner, _, ws = scene(svc)
    ids = [
        svc.entries.create(owner, ws, draft(f"Runbook {n}", f"step {n} of the failover")).entry_id for n in range(12)
    ]
    svc.search.search(owner, ws, "failover", 5)
    calls = Calls(svc.clients.dynamodb, svc.clients.kms, svc.clients.key_store)
    svc.search.search(owner, ws, "failover", 5)
    assert calls.names() == ["dynamodb.TransactGetItems"]
    svc.entries.supersede(owner, ws, ids[3], draft("Runbook 3", "step 3: page the database lead"), 1)
    calls.clear()
    results = svc.search.search(owner, ws, "database lead", 3).results
    assert (results[0].entry_id, results[0].revision) == (ids[3], 2)
    # membership + revision, the metadata Query (and its empty last page: DynamoDB's 1 MB page limit counts the
    # items before projection, so only an empty page ends the list), one read of the new revision's item
    assert calls.names() == [
        "dynamodb.TransactGetItems",
        "dynamodb.Query",
        "dynamodb.Query",
        "dynamodb.TransactGetItems",
    ]
    assert calls.kms() == []


def test_as_of_searches_the_revisions_valid_then_and_forget_removes_every_revision(svc: Services) -> None:
    owner, _, ws = scene(svc)
    entry_id = svc.entries.create(owner, ws, draft("Oncall", "Berlin team holds the pager")).entry_id
    before = svc.clock.now()
    svc.entries.supersede(owner, ws, entry_id, draft("Oncall", "Lisbon team holds the pager"), 1)
    now_hits = svc.search.search(owner, ws, "Berlin pager", 5).results
    assert [(r.entry_id, r.revision) for r in now_hits][:1] == [(entry_id, 2)]
    then = svc.search.search(owner, ws, "Berlin pager", 5, SearchFilters(as_of=before)).results
    assert [(r.entry_id, r.revision) for r in then] == [(entry_id, 1)]
    svc.entries.forget(owner, ws, entry_id)
    assert svc.search.search(owner, ws, "pager", 5).results == []
    assert svc.search.search(owner, ws, "pager", 5, SearchFilters(as_of=before)).results == []


def test_filters_narrow_before_ranking(svc: Services) -> None:
    owner, _, ws = scene(svc)
    svc.entries.create(owner, ws, draft("Style", "use British spelling", key="style/spelling"))
    rule = svc.entries.create(
        owner,
        ws,
        Draft(EntryType.RULE, EntryText("Spelling rule", "British spelling always", "", key="rules/spelling")),
    ).entry_id
    assert [
        r.entry_id for r in svc.search.search(owner, ws, "spelling", 5, SearchFilters(type=EntryType.RULE)).results
    ] == [rule]
    assert [
        r.entry_id for r in svc.search.search(owner, ws, "spelling", 5, SearchFilters(key_prefix="rules/")).results
    ] == [rule]


def test_every_revision_is_indexed_past_dynamodb_one_megabyte_pages(svc: Services, resources: LocalResources) -> None:
    """DynamoDB cuts a Query page at 1 MB of the items as stored, before the projection: with 4 KB bodies a
    page of metadata ends near 170 revisions, and the index must still hold every one of them."""
    owner, _, ws = scene(svc)
    filler = "lorem ipsum dolor " * 220  # ~4 KB
    try:
        ids = [
            svc.entries.create(
                owner, ws, Draft(EntryType.FACT, EntryText(f"Bulk {n}", f"bulk entry number{n}", filler))
            ).entry_id
            for n in range(260)
        ]
        results = svc.search.search(owner, ws, "number259", 1).results
        assert [r.entry_id for r in results] == [ids[-1]]
        counter = svc.table.get(*keys.entry_counter(ws))
        assert counter is not None
        assert len(svc.search.index(ws, int(counter["entriesRevision"])).docs) == 260
    finally:
        drop_partition(resources, keys.ws(ws))


def test_two_entries_search_cannot_tell_apart_go_to_the_more_read_first(svc: Services) -> None:
    """The tie-break reads the tied heads' read counts (`readCount`) from the table: the more-read entry first,
    the entry id only between equals."""
    owner, _, ws = scene(svc)
    first, second = sorted(
        svc.entries.create(owner, ws, draft("Deploy window", "releases go out on Tuesdays")).entry_id for _ in range(2)
    )
    assert [r.entry_id for r in svc.search.search(owner, ws, "Tuesdays", 2).results] == [first, second]
    for _ in range(2):
        svc.entries.read(owner, ws, second)
    svc.entries.flush_read_counts()
    results = svc.search.search(owner, ws, "Tuesdays", 2).results
    assert [r.entry_id for r in results] == [second, first]
    assert results[0].score == results[1].score
