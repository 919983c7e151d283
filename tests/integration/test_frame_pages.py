"""Pages in the memory frame, in headless Chromium against the local stack (decisions/0085): a person sees a
workspace's pages (title, category, whether the summary is stale, the entries filed) and files and unfiles an
entry through the page; each outcome is checked through the API and the table."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from scripts.localstack.resources import LocalResources
from tests.integration.entries.test_entries import create, entry
from tests.integration.pages.page_support import new_page, read, workspace_items
from tests.integration.test_frame import browser, go, opened, page, playwright, shows_error  # noqa: F401
from tests.support import Api, new_user

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def test_a_person_files_and_unfiles_an_entry_through_the_page(
    page: Page,  # noqa: F811
    api: Api,
    gateway_url: str,
    resources: LocalResources,
) -> None:
    owner = new_user("owner")
    ws = api.workspace(owner)
    page_id = new_page(api, owner, ws, "Release process", category="area")["pageId"]
    entry_id = create(api, owner, ws, entry("Deploy day"))
    opened(page, gateway_url, owner, ws)
    go(page, "Pages")
    row = page.locator(f'#page-list tr[data-page-id="{page_id}"]')
    expect(row).to_contain_text("Release process")
    expect(row).to_contain_text("area")
    expect(row).to_contain_text("up to date")

    row.get_by_role("button", name="Open").click()
    region = page.get_by_role("region", name="Page Release process")
    expect(region).to_be_visible()
    expect(page.locator("#page-revision")).to_have_text("1")
    expect(region.get_by_text("No entries filed in this page.")).to_be_visible()
    region.get_by_label("Entry to file").select_option(entry_id)
    region.get_by_role("button", name="File entry").click()
    status = page.locator("#status")
    expect(status).to_have_text(f"Filed entry {entry_id} in page {page_id} (revision 2).")
    filed = page.locator(f'#page-entries tr[data-entry-id="{entry_id}"]')
    expect(filed).to_contain_text("Deploy day")
    expect(page.locator("#page-stale")).to_have_text("stale")  # entries filed, no summary yet
    expect(row).to_contain_text("stale")
    stored = read(api, owner, ws, page_id)
    assert (stored["revision"], [e["entryId"] for e in stored["entries"]]) == (2, [entry_id])
    assert stored["summaryStale"] is True
    assert any(i["sk"]["S"] == f"FILED#{entry_id}" for i in workspace_items(resources, ws))

    filed.get_by_role("button", name="Unfile").click()
    expect(status).to_have_text(f"Unfiled entry {entry_id} from page {page_id} (revision 3).")
    expect(region.get_by_text("No entries filed in this page.")).to_be_visible()
    stored = read(api, owner, ws, page_id)
    assert (stored["revision"], stored["entries"], stored["summaryStale"]) == (3, [], False)
    assert not any(i["sk"]["S"].startswith(("FILED#", "PAGEENTRY#")) for i in workspace_items(resources, ws))


def test_a_filing_on_a_stale_page_is_refused_and_shown(
    page: Page,  # noqa: F811
    api: Api,
    gateway_url: str,
    resources: LocalResources,
) -> None:
    """The page as shown is at revision 1; someone edits it meanwhile: the filing is refused, nothing stored."""
    owner = new_user("owner")
    ws = api.workspace(owner)
    page_id = new_page(api, owner, ws, "Clients")["pageId"]
    entry_id = create(api, owner, ws, entry("Acme"))
    opened(page, gateway_url, owner, ws)
    go(page, "Pages")
    page.locator(f'#page-list tr[data-page-id="{page_id}"]').get_by_role("button", name="Open").click()
    expect(page.locator("#page-revision")).to_have_text("1")
    edit = {"revision": 1, "title": "Clients (edited)"}
    assert api.call("PATCH", f"/v1/workspaces/{ws}/pages/{page_id}", user=owner, json=edit).status_code == 200
    before = workspace_items(resources, ws)
    page.get_by_label("Entry to file").select_option(entry_id)
    page.get_by_role("button", name="File entry").click()
    shows_error(page, "STALE_REVISION")
    assert workspace_items(resources, ws) == before
    assert read(api, owner, ws, page_id)["entries"] == []
