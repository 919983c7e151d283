"""Pages on the real stack (decisions/0085): the local gateway and the built entries function over moto, real
encryption. Compare-and-set on every change, refusals that change nothing, private entries and pages kept to
their member, a summary stale when what it was made from moved, no title or notes in clear, and the audit."""

from __future__ import annotations

import threading
import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from scripts.localstack.resources import LocalResources
from tests.integration.entries.test_entries import create, entry, fields, supersede
from tests.integration.pages.page_support import (
    code_of,
    file,
    new_page,
    page_path,
    read,
    unfile,
    workspace_items,
)
from tests.support import Api, item_bytes, new_user, scan_all
from workspace_memory.bootstrap import Services, build_services
from workspace_memory.kernel.settings import Settings
from workspace_memory.pages.errors import EntryAlreadyFiled
from workspace_memory.pages.model import MAX_PAGE_ENTRIES, NOTES_MAX_CHARS, TITLE_MAX_CHARS
from workspace_memory.pages.service import PageService

pytestmark = pytest.mark.integration


def pages_of(svc: Services) -> PageService:
    return PageService(svc.table, svc.cipher, svc.clock)


def test_a_page_is_created_read_edited_and_deleted_on_its_revision(api: Api, resources: LocalResources) -> None:
    owner, editor = new_user("owner"), new_user("editor")
    ws = api.workspace(owner)
    api.add_member(owner, ws, editor, "editor")
    page_id = new_page(api, editor, ws, "Deploys", notes="ask ops first")["pageId"]
    assert page_id.startswith("pg_")
    got = read(api, owner, ws, page_id)
    assert (got["title"], got["notes"], got["category"], got["scope"], got["revision"]) == (
        "Deploys",
        "ask ops first",
        "topic",
        "workspace",
        1,
    )
    assert (got["entries"], got["summaryStale"], "summary" not in got) == ([], False, True)

    edited = api.call("PATCH", page_path(ws, page_id), user=owner, json={"revision": 1, "category": "area"})
    assert (edited.status_code, edited.json()) == (200, {"pageId": page_id, "revision": 2})
    before = workspace_items(resources, ws)
    stale = api.call("PATCH", page_path(ws, page_id), user=editor, json={"revision": 1, "title": "Lost"})
    assert code_of(stale) == (409, "STALE_REVISION")
    assert stale.json()["currentRevision"] == 2
    gone = api.call("DELETE", f"{page_path(ws, page_id)}?revision=1", user=owner)
    assert (code_of(gone), gone.json()["currentRevision"]) == ((409, "STALE_REVISION"), 2)
    assert workspace_items(resources, ws) == before
    assert (read(api, owner, ws, page_id)["title"], read(api, owner, ws, page_id)["category"]) == ("Deploys", "area")

    cleared = api.call("PATCH", page_path(ws, page_id), user=editor, json={"revision": 2, "notes": ""})
    assert cleared.status_code == 200, cleared.text
    assert "notes" not in read(api, owner, ws, page_id)
    listed = api.call("GET", page_path(ws), user=editor).json()
    assert [(p["pageId"], p["title"], p["entryCount"]) for p in listed["pages"]] == [(page_id, "Deploys", 0)]
    assert listed["categories"] == ["you", "topic", "area", "people"]
    assert api.call("DELETE", f"{page_path(ws, page_id)}?revision=3", user=editor).status_code == 204
    assert code_of(api.call("GET", page_path(ws, page_id), user=owner)) == (404, "PAGE_NOT_FOUND")
    assert [i for i in workspace_items(resources, ws) if i["sk"]["S"].startswith(("PAGE", "FILED"))] == []


BAD_CREATES = [
    ({"category": "gossip", "title": "x"}, 400, "INVALID_PAGE_CATEGORY"),
    ({"category": "topic", "title": "x" * (TITLE_MAX_CHARS + 1)}, 400, "INVALID_REQUEST"),
    ({"category": "topic", "title": "x", "notes": "n" * (NOTES_MAX_CHARS + 1)}, 400, "INVALID_REQUEST"),
    ({"category": "topic", "title": "x", "colour": "red"}, 400, "INVALID_REQUEST"),
    ({"category": "topic", "title": ""}, 400, "INVALID_REQUEST"),
    ({"category": "topic", "title": "x", "scope": "everyone"}, 400, "INVALID_REQUEST"),
]


@pytest.mark.parametrize(("body", "status", "code"), BAD_CREATES)
def test_a_bad_page_is_refused_and_changes_nothing(
    api: Api, resources: LocalResources, body: dict[str, Any], status: int, code: str
) -> None:
    owner = new_user("owner")
    ws = api.workspace(owner)
    page_id = new_page(api, owner, ws)["pageId"]
    before = workspace_items(resources, ws)
    assert code_of(api.call("POST", page_path(ws), user=owner, json=body)) == (status, code)
    if "scope" not in body:  # a page's scope is fixed at creation: the edit has no such field
        patch = {"revision": 1, **body}
        assert code_of(api.call("PATCH", page_path(ws, page_id), user=owner, json=patch)) == (status, code)
    assert workspace_items(resources, ws) == before


def test_bad_ids_and_a_missing_revision_are_refused_and_change_nothing(api: Api, resources: LocalResources) -> None:
    owner = new_user("owner")
    ws = api.workspace(owner)
    page_id = new_page(api, owner, ws)["pageId"]
    entry_id = create(api, owner, ws, entry())
    before = workspace_items(resources, ws)
    base = page_path(ws, page_id)
    answers = {
        "no revision to edit": api.call("PATCH", base, user=owner, json={"title": "y"}),
        "no revision to delete": api.call("DELETE", base, user=owner),
        "no revision to file": api.call("PUT", f"{base}/entries/{entry_id}", user=owner, json={}),
        "no revision to unfile": api.call("DELETE", f"{base}/entries/{entry_id}", user=owner),
        "revision 0": file(api, owner, ws, page_id, entry_id, 0),
    }
    for why, answer in answers.items():
        assert answer.status_code == 400, (why, answer.text)
    missing = {
        "a page id of no page": api.call("GET", page_path(ws, "pg_" + "0" * 24), user=owner),
        "a malformed page id": api.call("GET", page_path(ws, "nonsense"), user=owner),
        "a malformed id edited": api.call("PATCH", page_path(ws, "x"), user=owner, json={"revision": 1}),
    }
    for why, answer in missing.items():
        assert code_of(answer) == (404, "PAGE_NOT_FOUND"), why
    assert code_of(file(api, owner, ws, page_id, "en_nonsense", 1)) == (404, "ENTRY_NOT_FOUND")
    assert code_of(unfile(api, owner, ws, page_id, entry_id, 1)) == (404, "ENTRY_NOT_FILED")
    assert workspace_items(resources, ws) == before


def test_filing_and_unfiling_move_the_page_and_refuse_a_second_page(api: Api, resources: LocalResources) -> None:
    owner = new_user("owner")
    ws = api.workspace(owner)
    first, second = new_page(api, owner, ws, "First")["pageId"], new_page(api, owner, ws, "Second")["pageId"]
    entry_id = create(api, owner, ws, entry("Deploy day"))
    filed = file(api, owner, ws, first, entry_id, 1)
    assert (filed.status_code, filed.json()["revision"]) == (200, 2)
    again = file(api, owner, ws, first, entry_id, 1)  # already here: nothing to do, whatever revision
    assert (again.status_code, again.json()["revision"]) == (200, 2)
    got = read(api, owner, ws, first)
    assert [(e["entryId"], e["revision"], e["title"]) for e in got["entries"]] == [(entry_id, 1, "Deploy day")]
    assert got["summaryStale"] is True  # filed entries and no summary yet

    before = workspace_items(resources, ws)
    assert code_of(file(api, owner, ws, second, entry_id, 1)) == (409, "ENTRY_ALREADY_FILED")
    other = create(api, owner, ws, entry("Other"))
    stale = file(api, owner, ws, first, other, 1)
    assert (code_of(stale), stale.json()["currentRevision"]) == ((409, "STALE_REVISION"), 2)
    pages_now = [i for i in workspace_items(resources, ws) if i["sk"]["S"].startswith(("PAGE", "FILED"))]
    assert pages_now == [i for i in before if i["sk"]["S"].startswith(("PAGE", "FILED"))]

    assert unfile(api, owner, ws, first, entry_id, 2).json()["revision"] == 3
    assert read(api, owner, ws, first)["entries"] == []
    assert file(api, owner, ws, second, entry_id, 1).status_code == 200
    assert [e["entryId"] for e in read(api, owner, ws, second)["entries"]] == [entry_id]


def test_a_full_page_refuses_one_more_entry_and_changes_nothing(
    api: Api, svc: Services, resources: LocalResources
) -> None:
    owner = new_user("owner")
    ws = api.workspace(owner)
    page_id = new_page(api, owner, ws)["pageId"]
    caller = pages_of(svc).caller(owner, ws)
    revision = 1
    for n in range(MAX_PAGE_ENTRIES):
        entry_id = create(api, owner, ws, entry(f"Entry {n}"))
        revision = pages_of(svc).filing.file(caller, page_id, entry_id, revision).revision
    one_more = create(api, owner, ws, entry("One more"))
    before = workspace_items(resources, ws)
    refused = file(api, owner, ws, page_id, one_more, revision)
    assert code_of(refused) == (409, "PAGE_FULL")
    assert workspace_items(resources, ws) == before
    assert api.call("DELETE", f"{page_path(ws, page_id)}?revision={revision}", user=owner).status_code == 204
    assert [i for i in workspace_items(resources, ws) if i["sk"]["S"].startswith(("PAGE", "FILED"))] == []


def test_private_entries_and_pages_stay_with_their_member(api: Api, resources: LocalResources) -> None:
    owner, member = new_user("owner"), new_user("member")
    ws = api.workspace(owner)
    api.add_member(owner, ws, member, "viewer")  # a private page is its member's whatever their role
    shared = new_page(api, owner, ws, "Shared")["pageId"]
    mine = new_page(api, member, ws, "Mine", scope="private", category="you")["pageId"]
    theirs = new_page(api, owner, ws, "Owner's own", scope="private")["pageId"]
    private = create(api, member, ws, entry("Diet", scope="member", key="me/diet"))
    before = workspace_items(resources, ws)
    assert code_of(file(api, owner, ws, shared, private, 1)) == (404, "ENTRY_NOT_FOUND")  # the owner cannot see it
    assert code_of(file(api, owner, ws, theirs, private, 1)) == (404, "ENTRY_NOT_FOUND")
    assert code_of(file(api, member, ws, shared, private, 1)) == (403, "FORBIDDEN")  # a viewer writes no shared page
    assert workspace_items(resources, ws) == before

    api.add_member(owner, ws, member, "editor")
    before = workspace_items(resources, ws)
    assert code_of(file(api, member, ws, shared, private, 1)) == (400, "FILING_SCOPE_MISMATCH")
    assert workspace_items(resources, ws) == before
    assert file(api, member, ws, mine, private, 1).status_code == 200

    missing = api.call("GET", page_path(ws, "pg_" + "0" * 24), user=owner)
    base = page_path(ws, mine)
    refused = [
        api.call("GET", base, user=owner),
        api.call("PATCH", base, user=owner, json={"revision": 2, "title": "Taken"}),
        api.call("DELETE", f"{base}?revision=2", user=owner),
        unfile(api, owner, ws, mine, private, 2),
        file(api, owner, ws, mine, create(api, owner, ws, entry("Owner's")), 2),
    ]
    before = workspace_items(resources, ws)
    for answer in refused[:4]:
        assert (answer.status_code, answer.content) == (404, missing.content)
    assert code_of(refused[4]) == (404, "PAGE_NOT_FOUND")
    listed = api.call("GET", page_path(ws), user=owner)
    assert {p["pageId"] for p in listed.json()["pages"]} == {shared, theirs}
    assert "Mine" not in listed.text
    assert "Diet" not in listed.text
    assert {p["pageId"] for p in api.call("GET", page_path(ws), user=member).json()["pages"]} == {shared, mine}
    assert workspace_items(resources, ws) == before
    assert [e["title"] for e in read(api, member, ws, mine)["entries"]] == ["Diet"]


def test_the_summary_goes_stale_when_a_filed_entry_moves_or_is_forgotten(api: Api, svc: Services) -> None:
    owner = new_user("owner")
    ws = api.workspace(owner)
    page_id = new_page(api, owner, ws)["pageId"]
    kept, forgotten = create(api, owner, ws, entry("Kept")), create(api, owner, ws, entry("Forgotten"))
    assert file(api, owner, ws, page_id, kept, 1).status_code == 200
    assert file(api, owner, ws, page_id, forgotten, 2).status_code == 200
    pages, caller = pages_of(svc), pages_of(svc).caller(owner, ws)
    pages.filing.set_summary(caller, page_id, 3, "Deploys on Fridays.", [(kept, 1), (forgotten, 1)])
    got = read(api, owner, ws, page_id)
    assert (got["summary"], got["summaryStale"]) == ("Deploys on Fridays.", False)

    assert supersede(api, owner, ws, kept, 1, fields("Kept", body="Tuesdays now")).status_code == 200
    got = read(api, owner, ws, page_id)
    assert got["summaryStale"] is True
    assert {(e["entryId"], e["revision"]) for e in got["entries"]} == {(kept, 2), (forgotten, 1)}
    pages.filing.set_summary(caller, page_id, 4, "Deploys on Tuesdays.", [(kept, 2), (forgotten, 1)])
    assert read(api, owner, ws, page_id)["summaryStale"] is False

    assert api.call("DELETE", f"/v1/workspaces/{ws}/entries/{forgotten}", user=owner).status_code == 204
    got = read(api, owner, ws, page_id)
    assert (got["summaryStale"], [e["entryId"] for e in got["entries"]]) == (True, [kept])
    listed = api.call("GET", page_path(ws), user=owner).json()["pages"]
    assert [(p["summaryStale"], p["entryCount"]) for p in listed] == [(True, 1)]


def test_titles_and_notes_are_never_stored_in_clear(api: Api, resources: LocalResources) -> None:
    owner = new_user("owner")
    ws = api.workspace(owner)
    title, notes = f"TITLE-{uuid.uuid4().hex}", f"NOTES-{uuid.uuid4().hex}"
    page_id = new_page(api, owner, ws, title, notes=notes)["pageId"]
    edited_title, edited_notes = f"EDITED-{uuid.uuid4().hex}", f"NEWNOTES-{uuid.uuid4().hex}"
    body = {"revision": 1, "title": edited_title, "notes": edited_notes}
    assert api.call("PATCH", page_path(ws, page_id), user=owner, json=body).status_code == 200
    assert read(api, owner, ws, page_id)["title"] == edited_title
    stored = [item_bytes(i) for i in scan_all(resources)]
    page_items = [i for i in scan_all(resources) if i["sk"]["S"] == f"PAGE#{page_id}"]
    assert len(page_items) == 1
    assert {"titleCiphertext", "notesCiphertext"} <= set(page_items[0])
    for marker in (title, notes, edited_title, edited_notes):
        assert [b for b in stored if marker.encode() in b] == []


def test_every_page_change_is_audited_with_ids_only(api: Api, resources: LocalResources) -> None:
    owner = new_user("owner")
    ws = api.workspace(owner)
    marker = f"PAGEMARK{uuid.uuid4().hex[:10]}"
    page_id = new_page(api, owner, ws, marker, notes=marker)["pageId"]
    entry_id = create(api, owner, ws, entry("Deploys"))
    edit = {"revision": 1, "title": f"{marker} 2", "notes": f"{marker} notes"}
    assert api.call("PATCH", page_path(ws, page_id), user=owner, json=edit).status_code == 200
    assert file(api, owner, ws, page_id, entry_id, 2).status_code == 200
    assert unfile(api, owner, ws, page_id, entry_id, 3).status_code == 200
    categories = api.call(
        "PUT", f"/v1/workspaces/{ws}/page-categories", user=owner, json={"categories": ["clients"], "revision": 0}
    )
    assert categories.status_code == 200, categories.text
    assert api.call("DELETE", f"{page_path(ws, page_id)}?revision=4", user=owner).status_code == 204

    trail = api.call("GET", f"/v1/workspaces/{ws}/audit?limit=100", user=owner)
    assert trail.status_code == 200, trail.text
    events = [e for e in reversed(trail.json()["events"]) if e["kind"] in ("page", "page-categories")]
    told = [(e["kind"], e["op"], e["actor"]) for e in events]
    assert told == [
        ("page", "created", owner),
        ("page", "revised", owner),
        ("page", "filed", owner),
        ("page", "unfiled", owner),
        ("page-categories", "set", owner),
        ("page", "deleted", owner),
    ]
    filed = events[2]["targets"]
    assert {"kind": "entry", "id": entry_id} in [{k: t[k] for k in ("kind", "id")} for t in filed]
    assert all(t["id"] in (page_id, entry_id, ws) for e in events for t in e["targets"])
    assert marker not in trail.text
    audit_items = [i for i in scan_all(resources) if i["pk"]["S"] == f"WS#{ws}" and i["sk"]["S"].startswith("AUDIT#")]
    assert [i for i in audit_items if marker.encode() in item_bytes(i)] == []


def test_a_category_taken_off_stays_on_its_page_through_an_edit(api: Api, resources: LocalResources) -> None:
    """An edit that sends the page's own category back (a form sends every field) is not choosing it anew: it
    is kept even once the owner took it off the list; choosing a category off the list is still refused."""
    owner = new_user("owner")
    ws = api.workspace(owner)
    path = f"/v1/workspaces/{ws}/page-categories"
    assert api.call("PUT", path, user=owner, json={"categories": ["clients", "vendors"], "revision": 0}).ok
    page_id = new_page(api, owner, ws, "Acme", category="clients")["pageId"]
    assert api.call("PUT", path, user=owner, json={"categories": [], "revision": 1}).ok
    kept = {"revision": 1, "title": "Acme Corp", "category": "clients"}
    edited = api.call("PATCH", page_path(ws, page_id), user=owner, json=kept)
    assert (edited.status_code, edited.json()["revision"]) == (200, 2), edited.text
    assert (read(api, owner, ws, page_id)["title"], read(api, owner, ws, page_id)["category"]) == (
        "Acme Corp",
        "clients",
    )
    before = workspace_items(resources, ws)
    chosen = {"revision": 2, "category": "vendors"}
    refused = api.call("PATCH", page_path(ws, page_id), user=owner, json=chosen)
    assert code_of(refused) == (400, "INVALID_PAGE_CATEGORY")
    assert workspace_items(resources, ws) == before


def test_two_concurrent_filings_of_one_entry_land_in_one_page(api: Api, settings: Settings) -> None:
    """Two service instances (two warm Lambdas), real threads, one entry filed into two pages at once each
    round: exactly one filing lands, the other is `ENTRY_ALREADY_FILED`, and the entry is in one page."""
    owner = new_user("owner")
    ws = api.workspace(owner)
    first, second = build_services(settings), build_services(settings)
    barrier = threading.Barrier(2)

    def file_into(svc: Services, page_id: str, entry_id: str) -> str:
        pages = pages_of(svc)
        caller = pages.caller(owner, ws)
        barrier.wait()
        try:
            pages.filing.file(caller, page_id, entry_id, 1)
        except EntryAlreadyFiled:
            return "refused"
        return "filed"

    with ThreadPoolExecutor(max_workers=2) as pool:
        for _ in range(5):
            one, other = new_page(api, owner, ws, "One")["pageId"], new_page(api, owner, ws, "Other")["pageId"]
            entry_id = create(api, owner, ws, entry())
            outcomes = list(pool.map(file_into, (first, second), (one, other), (entry_id, entry_id)))
            assert sorted(outcomes) == ["filed", "refused"]
            held = [p for p in (one, other) if read(api, owner, ws, p)["entries"]]
            assert held == [(one, other)[outcomes.index("filed")]]
