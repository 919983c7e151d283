"""Pages when their workspace or their member goes (decisions/0085), with the production worker on the Temporal
dev server: a workspace's deletion takes its pages and filings; a member's erasure takes that member's private
pages and their filings, and leaves the workspace's pages and what is filed in them."""

from __future__ import annotations

import pytest

from scripts.localstack.resources import LocalResources
from tests.integration.entries.test_entries import create, entry
from tests.integration.pages.page_support import file, new_page, page_path, read, workspace_items
from tests.integration.turn_support import running_worker, worker_settings
from tests.integration.workspaces.test_deletion import delete, wait_for_deletion
from tests.integration.workspaces.test_erasure import erase, wait_for_erasure
from tests.support import Api, new_user
from workspace_memory.bootstrap import Services
from workspace_memory.kernel.settings import Settings

pytestmark = pytest.mark.integration

PAGE_ITEMS = ("PAGE", "FILED#")


def page_items(resources: LocalResources, ws: str) -> list[str]:
    return [str(i["sk"]["S"]) for i in workspace_items(resources, ws) if i["sk"]["S"].startswith(PAGE_ITEMS)]


def test_a_workspace_deletion_removes_its_pages_and_filings(
    api: Api, svc: Services, settings: Settings, resources: LocalResources, gateway_url: str
) -> None:
    owner = new_user("owner")
    ws = api.workspace(owner)
    page_id = new_page(api, owner, ws)["pageId"]
    assert file(api, owner, ws, page_id, create(api, owner, ws, entry()), 1).status_code == 200
    private = new_page(api, owner, ws, "Mine", scope="private")["pageId"]
    assert file(api, owner, ws, private, create(api, owner, ws, entry(scope="member")), 1).status_code == 200
    categories = {"categories": ["clients"], "revision": 0}
    assert api.call("PUT", f"/v1/workspaces/{ws}/page-categories", user=owner, json=categories).status_code == 200
    assert len(page_items(resources, ws)) == 7  # two pages, two filings of two items each, the categories

    with running_worker(worker_settings(settings, gateway_url)):
        assert delete(api, owner, ws, ws).status_code == 202
        wait_for_deletion(settings, svc, ws)
    assert page_items(resources, ws) == []


def test_an_erasure_removes_the_members_private_pages_and_keeps_the_workspaces(
    api: Api, svc: Services, settings: Settings, resources: LocalResources, gateway_url: str
) -> None:
    owner, member = new_user("owner"), new_user("leaver")
    ws = api.workspace(owner)
    api.add_member(owner, ws, member, "editor")
    shared = new_page(api, member, ws, "Shared")["pageId"]
    shared_entry = create(api, member, ws, entry("Team"))
    assert file(api, member, ws, shared, shared_entry, 1).status_code == 200
    mine = new_page(api, member, ws, "Mine", scope="private", category="you")["pageId"]
    assert file(api, member, ws, mine, create(api, member, ws, entry("Diet", scope="member")), 1).status_code == 200
    kept = create(api, owner, ws, entry("Kept in a private page"))
    assert file(api, member, ws, mine, kept, 2).status_code == 200  # a workspace entry in the member's own page
    owners = new_page(api, owner, ws, "Owner's", scope="private")["pageId"]

    with running_worker(worker_settings(settings, gateway_url)):
        accepted = erase(api, owner, ws, member, member)
        assert accepted.status_code == 202, accepted.text
        wait_for_erasure(settings, svc, ws, accepted.json()["erasureId"])

    left = page_items(resources, ws)
    assert [sk for sk in left if mine in sk] == []
    assert f"FILED#{kept}" not in left  # the workspace entry is free to be filed again
    assert sorted(sk for sk in left if sk.startswith("PAGE#")) == sorted([f"PAGE#{shared}", f"PAGE#{owners}"])
    assert [e["entryId"] for e in read(api, owner, ws, shared)["entries"]] == [shared_entry]
    missing = api.call("GET", page_path(ws, mine), user=owner)
    assert (missing.status_code, missing.json()["error"]["code"]) == (404, "PAGE_NOT_FOUND")
    assert file(api, owner, ws, shared, kept, 2).status_code == 200
