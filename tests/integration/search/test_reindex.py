"""The owner's reindex against the moto server with real encryption: steps of bounded size seal the snapshot
until it is complete, resume from any process, never serve an incomplete snapshot as whole, start over after
a forget, follow writes made between steps, change no entry, and refuse anyone but the owner."""

from __future__ import annotations

from typing import Any

import pytest

from tests.integration.entry_support import draft
from tests.integration.search.test_search_snapshot import cold, scene, snapshot_items
from tests.support import Api, item_bytes, new_user, scan_all
from workspace_memory.bootstrap import Services, build_services
from workspace_memory.kernel.errors import Forbidden
from workspace_memory.kernel.settings import Settings
from workspace_memory.search import search_snapshot
from workspace_memory.search.reindex import Reindexer, ReindexProgress
from workspace_memory.store import keys
from workspace_memory.workspaces.access import Role

pytestmark = pytest.mark.integration


@pytest.fixture
def svc(settings: Settings) -> Services:
    return build_services(settings)


def fresh(settings: Settings, step: int = 3) -> Reindexer:
    """A reindexer in a new process's state: new clients, a cold branch-key cache, no warm index."""
    base = build_services(settings)
    return Reindexer(base.table, base.cipher, base.clock, base.search, step=step)


def stored(resources: Any, ws: str) -> list[bytes]:
    return sorted(item_bytes(i) for i in scan_all(resources) if ws in str(i["pk"]))


def memory(resources: Any, ws: str) -> list[bytes]:
    """Every item of the workspace but its search snapshot's."""
    items = scan_all(resources)
    return sorted(
        item_bytes(i) for i in items if ws in str(i["pk"]) and keys.SEARCH_SNAPSHOT_PREFIX not in str(i["sk"])
    )


def sealed_ids(svc: Services, ws: str) -> set[str]:
    snapshot = search_snapshot.load(svc.table, svc.cipher, ws, svc.clock.now())
    assert snapshot is not None
    return {d.entry_id for d in snapshot.docs}


def test_steps_from_fresh_processes_seal_the_snapshot_until_a_cold_search_decrypts_nothing(
    svc: Services, settings: Settings, resources: Any
) -> None:
    owner, ws, ids = scene(svc, 7)
    entries = memory(resources, ws)
    steps = [fresh(settings).step(owner, ws) for _ in range(4)]
    assert steps == [
        ReindexProgress(3, 7, 3, False),
        ReindexProgress(6, 7, 3, False),
        ReindexProgress(7, 7, 1, True),
        ReindexProgress(7, 7, 0, True),  # a complete, current snapshot: nothing to do
    ]
    assert sealed_ids(svc, ws) == set(ids)
    search = cold(svc, snapshot_after=50)
    assert [r.entry_id for r in search.search(owner, ws, "step 5 failover", 1).results] == [ids[5]]
    assert search.last_build is not None
    assert (search.last_build.decrypted, search.last_build.from_snapshot) == (0, True)
    assert "failover" not in str(item_bytes(snapshot_items(svc, ws)))
    assert memory(resources, ws) == entries  # a reindex changes nothing but the snapshot


def test_an_incomplete_snapshot_is_reused_but_never_served_as_whole(svc: Services, settings: Settings) -> None:
    owner, ws, ids = scene(svc, 7)
    assert fresh(settings).step(owner, ws) == ReindexProgress(3, 7, 3, False)
    missing = (set(ids) - sealed_ids(svc, ws)).pop()
    number = ids.index(missing)
    search = cold(svc, snapshot_after=50)
    assert [r.entry_id for r in search.search(owner, ws, f"step {number} failover", 1).results] == [missing]
    assert search.last_build is not None
    assert (search.last_build.decrypted, search.last_build.from_snapshot) == (4, True)


def test_a_forget_between_steps_starts_the_reindex_over_without_the_forgotten_entry(
    svc: Services, settings: Settings
) -> None:
    owner, ws, ids = scene(svc, 5)
    assert fresh(settings).step(owner, ws).indexed == 3
    svc.entries.forget(owner, ws, ids[0])
    assert svc.table.get(*keys.search_snapshot(ws)) is None  # the forget deleted the snapshot, partial or not
    assert fresh(settings).step(owner, ws) == ReindexProgress(3, 4, 3, False)
    assert fresh(settings).step(owner, ws) == ReindexProgress(4, 4, 1, True)
    assert sealed_ids(svc, ws) == set(ids[1:])


def test_a_write_between_steps_is_taken_in(svc: Services, settings: Settings) -> None:
    owner, ws, ids = scene(svc, 4)
    assert fresh(settings).step(owner, ws) == ReindexProgress(3, 4, 3, False)
    svc.entries.supersede(owner, ws, ids[0], draft("Runbook 0", "step 0: page the database lead"), 1)
    added = svc.entries.create(owner, ws, draft("Runbook 9", "step 9 of the failover drill")).entry_id
    # six retained revisions now: four first revisions, the superseded one's second, the new entry's first
    assert fresh(settings).step(owner, ws) == ReindexProgress(6, 6, 3, True)
    assert sealed_ids(svc, ws) == {*ids, added}
    search = cold(svc, snapshot_after=50)
    top = search.search(owner, ws, "database lead", 1).results
    assert [(r.entry_id, r.revision) for r in top] == [(ids[0], 2)]
    assert search.last_build is not None
    assert search.last_build.decrypted == 0


def test_only_the_owner_reindexes_and_a_refusal_stores_nothing(svc: Services, settings: Settings) -> None:
    owner, ws, _ = scene(svc, 2)
    editor = new_user("editor")
    svc.access.put_member(owner, ws, editor, Role.EDITOR)
    with pytest.raises(Forbidden):
        fresh(settings).step(editor, ws)
    assert snapshot_items(svc, ws) == []


def test_the_route_reports_progress_to_the_owner_and_refuses_everyone_else(api: Api, resources: Any) -> None:
    owner, editor, stranger = new_user("owner"), new_user("editor"), new_user("stranger")
    ws = api.workspace(owner)
    api.add_member(owner, ws, editor, "editor")
    for n in range(3):
        body = {"scope": "workspace", "type": "fact", "title": f"Runbook {n}", "summary": "failover", "body": ""}
        assert api.call("POST", f"/v1/workspaces/{ws}/entries", user=owner, json=body).status_code == 201
    before = stored(resources, ws)
    for user, status, code in ((editor, 403, "FORBIDDEN"), (stranger, 404, "WORKSPACE_NOT_FOUND")):
        refused = api.call("POST", f"/v1/workspaces/{ws}/search/reindex", user=user)
        assert (refused.status_code, refused.json()["error"]["code"]) == (status, code)
    assert stored(resources, ws) == before
    done = api.call("POST", f"/v1/workspaces/{ws}/search/reindex", user=owner)
    assert done.status_code == 200, done.text
    assert done.json() == {"indexed": 3, "total": 3, "decrypted": 3, "complete": True}
    again = api.call("POST", f"/v1/workspaces/{ws}/search/reindex", user=owner).json()
    assert again == {"indexed": 3, "total": 3, "decrypted": 0, "complete": True}
