"""The encrypted search snapshot against the moto server with real encryption: a cold process decrypts it
once and then only the revisions written since; a snapshot built before a write is never stored; its ttl is
no later than the retention of what it holds; a forget (of one entry, or of a member's) removes it."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from tests.integration.adapters.test_branch_keys import Calls
from tests.integration.entry_support import draft
from tests.support import Api, item_bytes, new_user, scan_all
from workspace_memory.bootstrap import Services, build_embedder, build_services
from workspace_memory.kernel.settings import Settings
from workspace_memory.kernel.terms import EntryScope
from workspace_memory.search import search_snapshot
from workspace_memory.search.entry_search import SearchService, WarmIndexes
from workspace_memory.store import keys
from workspace_memory.workspaces.access import Role, ShareType

pytestmark = pytest.mark.integration


def cold(svc: Services, snapshot_after: int | None = 3) -> SearchService:
    """A search service with no warm index, as a new process has (the entries' embedder, the real cipher)."""
    embedder = build_embedder(svc.settings)
    return SearchService(svc.table, svc.cipher, svc.clock, embedder, WarmIndexes(), snapshot_after=snapshot_after)


def snapshot_items(svc: Services, ws: str) -> list[dict[str, Any]]:
    return svc.table.query(keys.ws(ws), keys.SEARCH_SNAPSHOT_PREFIX, limit=100, newest_first=False)


@pytest.fixture
def svc(settings: Settings) -> Services:
    return build_services(settings)


def scene(svc: Services, entries: int) -> tuple[str, str, list[str]]:
    owner = new_user("owner")
    ws = svc.access.create_workspace(owner, "snap", ShareType.SHARED)
    ids = [
        svc.entries.create(owner, ws, draft(f"Runbook {n}", f"step {n} of the failover drill")).entry_id
        for n in range(entries)
    ]
    return owner, ws, ids


QUERIES = ("failover drill", "step 7", "database lead", "runbook")


def test_a_cold_process_decrypts_the_snapshot_once_then_only_newer_revisions(svc: Services) -> None:
    owner, ws, ids = scene(svc, 8)
    first = cold(svc)
    first.search(owner, ws, "failover", 5)
    assert first.last_build is not None
    assert (first.last_build.decrypted, first.last_build.snapshot_stored) == (8, True)
    pointer = svc.table.get(*keys.search_snapshot(ws))
    assert pointer is not None
    assert (pointer["docs"], pointer["chunks"]) == (8, 1)
    assert "failover" not in str(item_bytes(snapshot_items(svc, ws)))

    # nothing written since: the snapshot alone, no revision read, no metadata Query
    calls = Calls(svc.clients.dynamodb, svc.clients.kms, svc.clients.key_store)
    again = cold(svc)
    again.search(owner, ws, "failover", 5)
    assert again.last_build is not None
    assert (again.last_build.decrypted, again.last_build.from_snapshot) == (0, True)
    assert calls.names() == ["dynamodb.TransactGetItems", "dynamodb.GetItem", "dynamodb.Query"]

    svc.entries.supersede(owner, ws, ids[3], draft("Runbook 3", "step 3: page the database lead"), 1)
    svc.entries.create(owner, ws, draft("Runbook 8", "step 8 of the failover drill"))
    calls.clear()
    later = cold(svc)
    results = later.search(owner, ws, "database lead", 3).results
    assert later.last_build is not None
    assert (later.last_build.decrypted, later.last_build.from_snapshot) == (2, True)
    assert (results[0].entry_id, results[0].revision) == (ids[3], 2)
    assert calls.names() == [
        "dynamodb.TransactGetItems",  # membership + entriesRevision
        "dynamodb.GetItem",  # the pointer
        "dynamodb.Query",  # its chunk
        "dynamodb.Query",  # the revisions' metadata
        "dynamodb.Query",  # ... and its empty last page
        "dynamodb.TransactGetItems",  # the two new revisions
    ]
    plain = cold(svc, snapshot_after=None)
    for query in QUERIES:
        assert later.search(owner, ws, query, 10) == plain.search(owner, ws, query, 10), query


def test_a_snapshot_built_before_a_write_is_not_stored(svc: Services) -> None:
    owner, ws, _ = scene(svc, 4)
    built = cold(svc, snapshot_after=None)
    index = built.index(ws, 4)
    svc.entries.create(owner, ws, draft("Runbook 4", "one more"))
    now = svc.clock.now()
    assert not search_snapshot.store(svc.table, svc.cipher, ws, 4, index.docs, now=now, ttl=None)
    assert snapshot_items(svc, ws) == []
    assert search_snapshot.store(svc.table, svc.cipher, ws, 5, index.docs, now=now, ttl=None)
    assert len(snapshot_items(svc, ws)) == 2


def test_the_snapshot_expires_no_later_than_the_retention_of_what_it_holds(svc: Services) -> None:
    owner, ws, ids = scene(svc, 5)
    svc.retention.set(owner, ws, 1)
    svc.entries.supersede(owner, ws, ids[0], draft("Runbook 0", "rewritten"), 1)
    superseded = svc.table.get(*keys.entry_revision(ws, ids[0], 1))
    assert superseded is not None
    first = cold(svc)
    first.search(owner, ws, "runbook", 5)
    assert first.last_build is not None
    assert first.last_build.snapshot_stored
    assert {int(i["ttl"]) for i in snapshot_items(svc, ws)} == {int(superseded["ttl"])}


def _snapshot_text(svc: Services, ws: str) -> str:
    snapshot = search_snapshot.load(svc.table, svc.cipher, ws, svc.clock.now())
    assert snapshot is not None
    return " ".join(d.title + d.summary for d in snapshot.docs)


def test_forgetting_an_entry_removes_the_snapshot_that_held_it(api: Api, svc: Services, resources: Any) -> None:
    owner = new_user("owner")
    ws = api.workspace(owner)
    marker = f"SNAPFORGET-{uuid.uuid4().hex}"
    body = {"scope": "workspace", "type": "fact", "title": marker, "summary": marker, "body": marker}
    created = api.call("POST", f"/v1/workspaces/{ws}/entries", user=owner, json=body)
    assert created.status_code == 201, created.text
    for n in range(4):
        svc.entries.create(owner, ws, draft(f"Filler {n}", "nothing to see"))
    cold(svc).search(owner, ws, marker, 5)
    assert marker in _snapshot_text(svc, ws)  # the snapshot held it (sealed)
    parts = [bytes(i["part"]) for i in snapshot_items(svc, ws) if "part" in i]
    assert parts
    entry_id = created.json()["entryId"]
    assert api.call("DELETE", f"/v1/workspaces/{ws}/entries/{entry_id}", user=owner).status_code == 204
    assert snapshot_items(svc, ws) == []
    for blob in (item_bytes(i) for i in scan_all(resources)):
        assert marker.encode() not in blob
        assert not any(p in blob for p in parts)
    assert entry_id not in {h.entry_id for h in cold(svc).search(owner, ws, marker, 5).results}


def test_forgetting_a_members_entries_removes_the_snapshot(api: Api, svc: Services) -> None:
    owner, member = new_user("owner"), new_user("member")
    ws = svc.access.create_workspace(owner, "snap", ShareType.SHARED)
    svc.access.put_member(owner, ws, member, Role.EDITOR)
    marker = f"MINE-{uuid.uuid4().hex}"
    for n in range(5):
        svc.entries.create(member, ws, draft(f"{marker} {n}", "private", scope=EntryScope.MEMBER))
    cold(svc).search(member, ws, marker, 5)
    assert marker in _snapshot_text(svc, ws)
    done = api.call("DELETE", f"/v1/workspaces/{ws}/members/{member}/entries", user=owner)
    assert (done.status_code, done.json()) == (200, {"forgotten": 5})
    assert snapshot_items(svc, ws) == []


def test_accepting_an_agents_forget_proposal_removes_the_snapshot(api: Api, svc: Services, resources: Any) -> None:
    """Attack (issue 17, finding 3): accepting an agent's forget candidate forgot the chain but left the search
    snapshot, which still held the entry's title, summary and body (sealed). Every forget now goes one way."""
    from tests.integration.entries.test_agent_entry_api import admitted, agent_workspace, decide, propose_forget

    owner, ws = agent_workspace(api, "read_only")
    marker = f"SNAPCAND-{uuid.uuid4().hex}"
    body = {"scope": "workspace", "type": "fact", "title": marker, "summary": marker, "body": marker}
    created = api.call("POST", f"/v1/workspaces/{ws}/entries", user=owner, json=body)
    assert created.status_code == 201, created.text
    entry_id = created.json()["entryId"]
    for n in range(4):
        svc.entries.create(owner, ws, draft(f"Filler {n}", "nothing to see"))
    cold(svc).search(owner, ws, marker, 5)
    assert marker in _snapshot_text(svc, ws)
    parts = [bytes(i["part"]) for i in snapshot_items(svc, ws) if "part" in i]
    proposed = propose_forget(api, ws, admitted(api, ws, owner), entry_id)
    assert proposed.status_code == 200, proposed.text

    accepted = decide(api, owner, ws, proposed.json()["candidateId"], "accept")

    assert accepted.status_code == 200, accepted.text
    assert snapshot_items(svc, ws) == []
    for blob in (item_bytes(i) for i in scan_all(resources)):
        assert marker.encode() not in blob
        assert not any(p in blob for p in parts)
    assert entry_id not in {h.entry_id for h in cold(svc).search(owner, ws, marker, 5).results}
