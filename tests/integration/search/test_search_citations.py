"""Search judges what its hits cite (docs/decisions/0081), as the list and recall do, through the local gateway, the
built handlers and the moto server with real encryption: a hit citing a purged document version or a forgotten
entry is left out and counted (`hidden`), the next best taking its place; one whose cited entry changed its body
says `sourceState: "changed"`; a citation of a member's private entry hides the hit from the others only. The
cost is one consistent read of what the answered hits cite, no cited text decrypted warm; a snapshot of the
format before (without sources) is not reused."""

from __future__ import annotations

import hashlib
from dataclasses import replace
from typing import Any
from urllib.parse import urlencode

import pytest

from tests.integration.adapters.test_branch_keys import Calls
from tests.support import Api, item_bytes, new_user, scan_all
from workspace_memory.bootstrap import Services, build_embedder
from workspace_memory.entries.model import Draft, EntryText, Source
from workspace_memory.kernel.terms import CitationKind, CitationState, EntryType
from workspace_memory.search import search_snapshot
from workspace_memory.search.entry_search import SearchService, WarmIndexes
from workspace_memory.store import keys
from workspace_memory.workspaces.access import ShareType

pytestmark = pytest.mark.integration

RETIRED = "- the pager rota lives in the old wiki"
V1 = f"# Team\n{RETIRED}\n"
V2 = "# Team\n- the pager rota lives in the handbook\n"


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def create(api: Api, user: str, ws: str, title: str, summary: str, body: str = "", **extra: Any) -> str:
    payload = {"scope": "workspace", "type": "fact", "title": title, "summary": summary, "body": body, **extra}
    response = api.call("POST", f"/v1/workspaces/{ws}/entries", user=user, json=payload)
    assert response.status_code == 201, response.text
    entry_id: str = response.json()["entryId"]
    return entry_id


def cites(kind: str, ref: str, text: str) -> dict[str, Any]:
    return {"sources": [{"kind": kind, "ref": ref, "sha256": sha(text)}]}


def search(api: Api, user: str, ws: str, query: str, k: int) -> dict[str, Any]:
    response = api.call("GET", f"/v1/workspaces/{ws}/search?{urlencode({'q': query, 'k': k})}", user=user)
    assert response.status_code == 200, response.text
    answer: dict[str, Any] = response.json()
    return answer


def stored(resources: Any, ws: str) -> list[bytes]:
    return sorted(item_bytes(i) for i in scan_all(resources) if ws in str(i["pk"]))


def test_a_hit_citing_a_gone_source_is_left_out_and_counted_and_a_changed_one_is_marked(
    api: Api, resources: Any
) -> None:
    owner = new_user("owner")
    ws = api.workspace(owner)
    assert api.save(owner, ws, V1, 0).status_code == 200
    assert api.save(owner, ws, V2, 1).status_code == 200
    cited = create(api, owner, ws, "Handbook owner", "Dana keeps the handbook", "Fridays")
    doomed = create(api, owner, ws, "Wiki owner", "Sam keeps the old wiki", "Fridays")
    # The two that will lose their source say the query's words most, so they rank first.
    rota = "pager rota pager rota"
    by_version = create(api, owner, ws, "Pager rota", rota, rota, **cites("document-version", "1", V1))
    by_doomed = create(api, owner, ws, "Pager rota", rota, rota, **cites("entry", doomed, "Fridays"))
    by_entry = create(api, owner, ws, "Pager rota owner", "ask Dana", "", **cites("entry", cited, "Fridays"))
    by_v2 = create(api, owner, ws, "Pager rota place", "see the handbook", "", **cites("document-version", "2", V2))
    plain = create(api, owner, ws, "Pager rota swaps", "swap in the channel")

    first = search(api, owner, ws, "pager rota", 20)
    assert first["hidden"] == 0
    assert {r["entryId"] for r in first["results"][:2]} == {by_version, by_doomed}  # they rank first
    states = {r["entryId"]: r.get("sourceState") for r in first["results"]}
    assert {e: states[e] for e in (by_version, by_doomed, by_entry, by_v2, plain)} == {
        by_version: "ok",
        by_doomed: "ok",
        by_entry: "ok",
        by_v2: "ok",
        plain: None,  # cites nothing: no state
    }

    purged = api.call("POST", f"/v1/workspaces/{ws}/memory/purge", user=owner, json={"line": RETIRED})
    assert purged.status_code == 200, purged.text
    assert purged.json()["purgedVersions"] == [1]
    assert api.call("DELETE", f"/v1/workspaces/{ws}/entries/{doomed}", user=owner).status_code == 204
    body = {"type": "fact", "title": "Handbook owner", "summary": "Dana keeps the handbook", "body": "Mondays"}
    api.supersede(owner, ws, cited, body, 1)

    before = stored(resources, ws)
    everything = search(api, owner, ws, "pager rota", 20)
    ids = [r["entryId"] for r in everything["results"]]
    assert everything["hidden"] == 2
    assert by_version not in ids
    assert by_doomed not in ids
    states = {r["entryId"]: r.get("sourceState") for r in everything["results"]}
    assert {e: states[e] for e in (by_entry, by_v2, plain)} == {by_entry: "changed", by_v2: "ok", plain: None}
    # The two best ranked are gone: the next three take their place, and `hidden` counts what they replaced.
    three = search(api, owner, ws, "pager rota", 3)
    assert [r["entryId"] for r in three["results"]] == ids[:3]
    assert three["hidden"] == 2
    assert stored(resources, ws) == before  # a search writes nothing


def test_a_citation_of_a_members_private_entry_hides_the_hit_from_the_others_only(api: Api) -> None:
    owner, bob = new_user("owner"), new_user("bob")
    ws = api.workspace(owner)
    api.add_member(owner, ws, bob, "editor")
    mine = create(api, bob, ws, "My on-call notes", "what I check first", "Fridays", scope="member")
    citing = create(api, bob, ws, "Pager rota", "pager rota for the team", "", **cites("entry", mine, "Fridays"))
    create(api, owner, ws, "Pager rota swaps", "swap in the channel")

    theirs = search(api, owner, ws, "pager rota", 20)
    assert citing not in {r["entryId"] for r in theirs["results"]}
    assert theirs["hidden"] == 1
    his = search(api, bob, ws, "pager rota", 20)
    assert {r["entryId"]: r.get("sourceState") for r in his["results"]}[citing] == "ok"
    assert his["hidden"] == 0


def _citing(svc: Services, owner: str, ws: str, title: str, source: Source) -> str:
    text = EntryText(title, f"{title} for the team", "", (source,))
    return svc.entries.create(owner, ws, Draft(EntryType.FACT, text)).entry_id


def _scene(svc: Services) -> tuple[str, str, str, str]:
    """A workspace whose entry cites a version since purged, one whose citation changed, and fillers (enough to
    store a snapshot): (owner, workspace, the gone one, the changed one)."""
    owner = new_user("owner")
    ws = svc.access.create_workspace(owner, "cites", ShareType.SHARED)
    svc.document.save(owner, ws, V1, 0)
    svc.document.save(owner, ws, V2, 1)
    cited = svc.entries.create(owner, ws, Draft(EntryType.FACT, EntryText("Handbook owner", "Dana", "Fridays")))
    gone = _citing(svc, owner, ws, "Pager rota wiki", Source(CitationKind.DOCUMENT_VERSION, "1", sha(V1)))
    changed = _citing(svc, owner, ws, "Pager rota owner", Source(CitationKind.ENTRY, cited.entry_id, sha("Fridays")))
    for n in range(4):
        svc.entries.create(owner, ws, Draft(EntryType.FACT, EntryText(f"Runbook {n}", f"step {n} of the drill", "")))
    svc.purge.purge(owner, ws, RETIRED)
    text = EntryText("Handbook owner", "Dana", "Mondays")
    svc.entries.supersede(owner, ws, cited.entry_id, Draft(EntryType.FACT, text), 1)
    return owner, ws, gone, changed


def test_a_warm_search_adds_one_read_of_what_its_hits_cite_and_decrypts_no_cited_text(svc: Services) -> None:
    owner, ws, gone, changed = _scene(svc)
    svc.search.search(owner, ws, "pager rota", 5)  # warms the index and the cited texts' digests
    computed = svc.search.citations.digests.computed
    calls = Calls(svc.clients.dynamodb, svc.clients.kms, svc.clients.key_store)
    found = svc.search.search(owner, ws, "pager rota", 5)
    assert gone not in {r.entry_id for r in found.results}
    assert found.hidden == 1
    assert {r.entry_id: r.source_state for r in found.results}[changed] is CitationState.CHANGED
    # membership + entriesRevision, then what the hits cite (the purged version, the cited entry's head)
    assert calls.names() == ["dynamodb.TransactGetItems", "dynamodb.TransactGetItems"]
    assert svc.search.citations.digests.computed == computed
    calls.clear()
    # The one best hit cites the purged version: a second ranking of two, and what the new one cites is read.
    best = svc.search.search(owner, ws, "pager rota wiki", 1)
    assert ([r.entry_id for r in best.results], best.hidden) == ([changed], 1)
    assert calls.names() == ["dynamodb.TransactGetItems"] * 3
    calls.clear()
    plain = svc.search.search(owner, ws, "drill runbook", 5)
    assert plain.hidden == 0
    assert {r.source_state for r in plain.results} == {None}  # no hit cites anything ...
    assert calls.names() == ["dynamodb.TransactGetItems"]  # ... so nothing more is read


def test_a_snapshot_stored_without_sources_is_not_reused(svc: Services, monkeypatch: pytest.MonkeyPatch) -> None:
    """A snapshot of the format before this one holds no sources: a cold process that took it would answer the
    hit whose cited version was purged. It is skipped; the build decrypts the revisions and stores this format."""
    owner, ws, gone, _ = _scene(svc)
    built = SearchService(svc.table, svc.cipher, svc.clock, build_embedder(svc.settings), snapshot_after=None)
    counter = svc.table.get(*keys.entry_counter(ws))
    assert counter is not None
    revision = int(counter["entriesRevision"])
    sourceless = [replace(doc, sources=()) for doc in built.index(ws, revision).docs]
    with monkeypatch.context() as old:
        old.setattr(search_snapshot, "FORMAT", 2)
        assert search_snapshot.store(svc.table, svc.cipher, ws, revision, sourceless, now=svc.clock.now(), ttl=None)
    pointer = svc.table.get(*keys.search_snapshot(ws))
    assert pointer is not None
    assert pointer["format"] == 2

    cold = SearchService(
        svc.table, svc.cipher, svc.clock, build_embedder(svc.settings), WarmIndexes(), snapshot_after=3
    )
    found = cold.search(owner, ws, "pager rota wiki", 5)
    assert gone not in {r.entry_id for r in found.results}
    assert found.hidden == 1
    assert cold.last_build is not None
    assert (cold.last_build.from_snapshot, cold.last_build.decrypted, cold.last_build.snapshot_stored) == (
        False,
        len(sourceless),
        True,
    )
    pointer = svc.table.get(*keys.search_snapshot(ws))
    assert pointer is not None
    assert pointer["format"] == search_snapshot.FORMAT == 3
    again = SearchService(
        svc.table, svc.cipher, svc.clock, build_embedder(svc.settings), WarmIndexes(), snapshot_after=3
    )
    assert again.search(owner, ws, "pager rota wiki", 5) == found
    assert again.last_build is not None
    assert again.last_build.from_snapshot  # this format's snapshot carries the sources: the same answer from it
