"""The memory frame in a real browser: Debian's headless Chromium driven by Playwright, against the local stack
(gateway, moto server, real encryption; a real Temporal worker with the scripted model for the turn).

Each test acts through the page and checks the outcome through the API or a scan of the table. The browser is
never downloaded: `/usr/bin/chromium` (or `WM_CHROMIUM`) must exist, else these tests fail with how to get it;
`WM_SKIP_BROWSER_TESTS=1` skips them instead (a local choice, never set in CI). Screenshots of the main views
are written to docs/screenshots/.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, Playwright, expect, sync_playwright

from scripts.localstack.resources import LocalResources
from tests.integration.turn_support import running_worker, worker_settings
from tests.support import Api, new_user, scan_all
from workspace_memory.settings import Settings

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = ROOT / "docs" / "screenshots"
CHROMIUM = os.environ.get("WM_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
"""Without the background-networking flags Chromium tries (and noisily fails) to reach Google's services."""
WAIT_MS = 20_000
expect.set_options(timeout=WAIT_MS)


@pytest.fixture(scope="module")
def playwright() -> Iterator[Playwright]:
    if not Path(CHROMIUM).is_file():
        message = f"no Chromium at {CHROMIUM}: `sudo apt-get install -y chromium` (README, 'The memory frame')"
        if os.environ.get("WM_SKIP_BROWSER_TESTS") == "1":
            pytest.skip(message)
        pytest.fail(message)
    with sync_playwright() as p:
        yield p


@pytest.fixture(scope="module")
def browser(playwright: Playwright) -> Iterator[Browser]:
    launched = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
    yield launched
    launched.close()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    opened = context.new_page()
    opened.set_default_timeout(WAIT_MS)
    yield opened
    context.close()


@pytest.fixture(scope="module")
def worker(settings: Settings, gateway_url: str) -> Iterator[Settings]:
    wsettings = worker_settings(settings, gateway_url)
    with running_worker(wsettings):
        yield wsettings


def sign_in(page: Page, gateway_url: str, user: str) -> None:
    page.goto(f"{gateway_url}/app/")
    page.get_by_label("Dev user (local stack)").fill(user)
    page.get_by_role("button", name="Sign in").click()
    expect(page.locator("#whoami")).to_have_text(f"Signed in as {user}.")


def open_workspace(page: Page, ws: str) -> None:
    page.get_by_label("Workspace id").fill(ws)
    page.get_by_role("button", name="Open", exact=True).click()


def opened(page: Page, gateway_url: str, user: str, ws: str) -> Page:
    sign_in(page, gateway_url, user)
    open_workspace(page, ws)
    expect(page.locator("#status")).to_have_text(f"Opened workspace {ws}.")
    return page


def draft(page: Page) -> Any:
    return page.get_by_label("Memory document (Markdown)")


def shows_error(page: Page, code: str) -> None:
    expect(page.get_by_role("alert")).to_contain_text(code)


def shot(page: Page, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)


def test_save_through_the_page_and_what_the_page_weighs(page: Page, api: Api, gateway_url: str) -> None:
    owner = new_user("owner")
    ws = api.workspace(owner)
    shipped: dict[str, int] = {}
    page.on("requestfinished", lambda r: shipped.__setitem__(r.url, r.sizes()["responseBodySize"]))
    opened(page, gateway_url, owner, ws)
    timing = page.evaluate(
        "() => { const n = performance.getEntriesByType('navigation')[0];"
        " return {load: n.loadEventEnd - n.startTime, dom: n.domContentLoadedEventEnd - n.startTime}; }"
    )
    frame_bytes = sum(size for url, size in shipped.items() if "/app/" in url)
    print(
        f"\nframe: load {timing['load']:.1f} ms (DOMContentLoaded {timing['dom']:.1f} ms), "
        f"{frame_bytes} bytes in {sum('/app/' in u for u in shipped)} files"
    )
    assert frame_bytes > 0

    draft(page).fill("# Team\n- We deploy on Fridays\n")
    expect(page.locator("#dirty")).to_contain_text("Unsaved changes")
    page.get_by_role("button", name="Save", exact=True).click()
    expect(page.locator("#status")).to_have_text("Saved version 1.")
    assert api.read(owner, ws)["content"] == "# Team\n- We deploy on Fridays\n"
    expect(page.locator("#dirty")).to_have_text("")
    shot(page, "editor")


def test_a_conflict_keeps_the_draft_and_overwrites_nothing(
    page: Page, api: Api, gateway_url: str, resources: LocalResources
) -> None:
    owner = new_user("owner")
    ws = api.workspace(owner)
    assert api.save(owner, ws, "first\n", 0).status_code == 200
    opened(page, gateway_url, owner, ws)
    assert api.save(owner, ws, "theirs\n", 1).status_code == 200  # behind the page's back
    draft(page).fill("mine\n")
    before = scan_all(resources)
    page.get_by_role("button", name="Save", exact=True).click()
    shows_error(page, "STALE_BASE_VERSION")
    expect(page.locator("#conflict")).to_be_visible()
    expect(page.get_by_label("Newer text (version 2)")).to_have_value("theirs\n")
    expect(draft(page)).to_have_value("mine\n")
    assert scan_all(resources) == before
    assert api.read(owner, ws)["content"] == "theirs\n"
    shot(page, "conflict")

    page.get_by_role("button", name="Save my draft over the newer version").click()
    expect(page.locator("#status")).to_have_text("Saved version 3.")
    assert api.read(owner, ws)["content"] == "mine\n"


def test_clear_asks_to_resolve_a_dirty_draft_first(
    page: Page, api: Api, gateway_url: str, resources: LocalResources
) -> None:
    owner = new_user("owner")
    ws = api.workspace(owner)
    assert api.save(owner, ws, "keep me\n", 0).status_code == 200
    opened(page, gateway_url, owner, ws)
    draft(page).fill("keep me\nand a draft\n")
    before = scan_all(resources)
    page.get_by_role("button", name="Clear", exact=True).click()
    expect(page.get_by_role("region", name="You have unsaved changes")).to_be_visible()
    expect(page.get_by_role("button", name="Save the draft, then clear")).to_be_focused()
    assert scan_all(resources) == before  # nothing cleared yet
    page.get_by_role("button", name="Discard the draft and clear").click()
    expect(page.locator("#status")).to_have_text("Cleared: version 2 is empty.")
    current = api.read(owner, ws)
    assert (current["version"], current["content"]) == (2, "")
    expect(draft(page)).to_have_value("")


def test_undo_restores_the_previous_version(page: Page, api: Api, gateway_url: str) -> None:
    owner = new_user("owner")
    ws = api.workspace(owner)
    assert api.save(owner, ws, "one\n", 0).status_code == 200
    assert api.save(owner, ws, "two\n", 1).status_code == 200
    opened(page, gateway_url, owner, ws)
    page.keyboard.press("Tab")  # keyboard reachable: focus the Undo button and press it
    page.get_by_role("button", name="Undo").focus()
    page.keyboard.press("Enter")
    expect(page.locator("#status")).to_have_text("Undone: version 3 restores version 1.")
    expect(draft(page)).to_have_value("one\n")
    current = api.read(owner, ws)
    assert (current["version"], current["content"]) == (3, "one\n")


def test_diff_blame_a_turn_that_remembers_and_receipts(
    page: Page, api: Api, gateway_url: str, worker: Settings
) -> None:
    owner, bob = new_user("owner"), new_user("bob")
    ws = api.workspace(owner)
    api.add_member(owner, ws, bob, "editor")
    api.call("PUT", f"/v1/workspaces/{ws}/ai", user=owner, json={"enabled": True})
    assert api.save(owner, ws, "# Team\n- deploy Fridays\n", 0).status_code == 200
    assert api.save(bob, ws, "# Team\n- deploy Tuesdays\n", 1).status_code == 200
    opened(page, gateway_url, owner, ws)

    page.get_by_label("Memory policy").select_option("auto")
    page.get_by_role("button", name="Set policy").click()
    expect(page.locator("#status")).to_have_text("Policy is auto.")
    conv = f"conv-{uuid.uuid4().hex[:8]}"
    page.get_by_label("Conversation id").fill(conv)
    page.get_by_label("Message", exact=True).fill("remember: Feature flags gate risky changes")
    page.get_by_role("button", name="Send").click()
    expect(page.locator("#status")).to_have_text("Turn completed.")
    expect(page.locator("#transcript .remembered")).to_have_text("Remembered (version 3).")
    after = api.read(owner, ws)
    assert after["version"] == 3
    assert "Feature flags gate risky changes" in after["content"]
    turn_id = next(
        v
        for v in api.call("GET", f"/v1/workspaces/{ws}/memory/versions", user=owner).json()["versions"]
        if v["version"] == 3
    )["turnId"]
    shot(page, "chat")

    page.get_by_label("From version").fill("1")
    page.get_by_label("To version").fill("3")
    page.get_by_role("button", name="Show diff").click()
    diff = page.get_by_label("Diff")
    expect(diff.locator(".del")).to_have_text(["- - deploy Fridays"])
    expect(diff.locator(".add")).to_have_text(["+ - deploy Tuesdays", "+ Feature flags gate risky changes"])

    page.get_by_label("Blame version").fill("3")
    page.get_by_role("button", name="Show blame").click()
    rows = page.locator("#blame tbody tr")
    expect(rows).to_have_count(3)
    by_line = {}
    for i in range(3):
        cells = rows.nth(i).locator("td").all_inner_texts()
        by_line[cells[4]] = tuple(cells[1:4])
    assert by_line == {
        "# Team": ("v1", owner, "—"),
        "- deploy Tuesdays": ("v2", bob, "—"),
        "Feature flags gate risky changes": ("v3", owner, turn_id),
    }
    page.get_by_role("button", name="Load history").click()
    expect(page.locator("#history tbody tr")).to_have_count(3)
    shot(page, "changes")

    page.get_by_role("button", name="Load receipts").click()
    open_buttons = page.get_by_role("button", name="Open revision")
    expect(open_buttons.first).to_be_visible()
    receipts = api.call("GET", f"/v1/conversations/{conv}/memory-receipts", user=owner).json()["receipts"]
    first_revision = receipts[0]["revision"]
    assert first_revision == 2  # the first model call was given version 2
    open_buttons.first.click()
    expect(page.get_by_role("region", name=f"Revision {first_revision}")).to_be_visible()
    expect(page.locator("#revision-text")).to_have_text("# Team\n- deploy Tuesdays\n")
    shot(page, "receipts")


def test_a_viewer_sees_the_text_and_cannot_save(
    page: Page, api: Api, gateway_url: str, resources: LocalResources
) -> None:
    owner, viewer = new_user("owner"), new_user("viewer")
    ws = api.workspace(owner)
    api.add_member(owner, ws, viewer, "viewer")
    assert api.save(owner, ws, "visible to viewers\n", 0).status_code == 200
    opened(page, gateway_url, viewer, ws)
    expect(draft(page)).to_have_value("visible to viewers\n")
    # Known up front, before any attempt: the editor is read only, with the reason beside it.
    for name in ("Save", "Clear", "Undo"):
        expect(page.get_by_role("button", name=name, exact=True)).to_be_disabled()
    expect(draft(page)).to_have_attribute("readonly", "")
    expect(page.get_by_role("note")).to_have_text(
        "Read only: your role here is viewer, so you can read this memory but not save, clear or undo."
    )
    expect(page.locator("#role")).to_contain_text("you are viewer")
    expect(page.locator("#error")).to_be_hidden()
    shot(page, "viewer")

    # The API still refuses a save forced past the page (its own client, the viewer's token): nothing changes.
    before = scan_all(resources)
    code = page.evaluate(
        """async ([ws]) => {
            const { api } = await import("./api.js");
            try { await api.save(ws, "a viewer's edit\\n", 1); return "saved"; } catch (e) { return e.code; }
        }""",
        [ws],
    )
    assert code == "FORBIDDEN"
    assert api.save(viewer, ws, "a viewer's edit\n", 1).status_code == 403
    assert scan_all(resources) == before
    assert api.read(owner, ws)["content"] == "visible to viewers\n"


def test_the_ai_switch_shows_the_workspace_setting(page: Page, api: Api, gateway_url: str) -> None:
    owner = new_user("owner")
    ws = api.workspace(owner)
    assert api.call("PUT", f"/v1/workspaces/{ws}/ai", user=owner, json={"enabled": True}).status_code == 200
    opened(page, gateway_url, owner, ws)
    switch = page.get_by_label("Workspace AI enabled")
    expect(switch).to_be_checked()
    switch.uncheck()
    page.get_by_role("button", name="Apply AI setting").click()
    expect(page.locator("#status")).to_have_text("Workspace AI off.")
    view = api.call("GET", f"/v1/workspaces/{ws}", user=owner).json()
    assert (view["aiEnabled"], view["consentRevision"]) == (False, 2)
    expect(switch).not_to_be_checked()

    other = api.workspace(owner)  # AI off, as every new workspace: the switch follows the opened workspace
    open_workspace(page, other)
    expect(page.locator("#status")).to_have_text(f"Opened workspace {other}.")
    expect(switch).not_to_be_checked()


def test_key_sessions_opened_through_the_api_are_listed(page: Page, api: Api, gateway_url: str) -> None:
    owner, bob = new_user("owner"), new_user("bob")
    ws = api.workspace(owner)
    api.add_member(owner, ws, bob, "editor")
    mine = [api.key_session(owner, ws), api.key_session(owner, ws, ["memory:read"])]
    bobs = api.key_session(bob, ws)
    opened(page, gateway_url, owner, ws)
    items = page.locator("#key-sessions li")
    expect(items).to_have_count(2)
    assert [items.nth(i).get_attribute("data-key-session") for i in range(2)] == mine[::-1]  # newest first
    expect(items.nth(0)).to_contain_text("[memory:read]")
    assert bobs not in page.locator("#key-sessions").inner_text()  # never another member's

    items.nth(1).get_by_role("button", name="Revoke").click()
    expect(page.locator("#status")).to_have_text("Key session revoked.")
    expect(items.nth(1)).to_contain_text("(revoked)")
    expect(items.nth(1).get_by_role("button", name="Revoke")).to_be_disabled()
    listed = api.call("GET", f"/v1/workspaces/{ws}/key-sessions", user=owner).json()["keySessions"]
    assert [(s["keySessionId"], s["revoked"]) for s in listed] == [(mine[1], False), (mine[0], True)]
    shot(page, "settings")


def test_the_picker_lists_the_callers_workspaces(page: Page, api: Api, gateway_url: str) -> None:
    me, other = new_user("me"), new_user("other")
    mine = api.workspace(me)
    theirs = api.workspace(other)
    api.add_member(other, theirs, me, "viewer")
    elsewhere = api.workspace(other)
    sign_in(page, gateway_url, me)
    picker = page.get_by_label("Your workspaces")
    options = picker.locator("option")
    expect(options).to_have_count(2)
    values = {options.nth(i).get_attribute("value") for i in range(2)}
    assert values == {mine, theirs}
    assert elsewhere not in page.content()
    expect(picker.locator(f"option[value='{theirs}']")).to_contain_text("viewer")
    picker.select_option(theirs)
    page.get_by_role("button", name="Open selected").click()
    expect(page.locator("#status")).to_have_text(f"Opened workspace {theirs}.")
    expect(page.get_by_role("button", name="Save", exact=True)).to_be_disabled()

    page.get_by_label("New workspace name").fill("fresh")
    page.get_by_role("button", name="Create").click()
    expect(page.locator("#status")).to_contain_text("Opened workspace ws_")
    created = page.locator("#ws-id").input_value()
    expect(picker).to_have_value(created)  # listed at once, whatever the index has caught up with
    expect(page.get_by_role("button", name="Save", exact=True)).to_be_enabled()


def test_a_non_member_sees_nothing(page: Page, api: Api, gateway_url: str) -> None:
    owner = new_user("owner")
    ws = api.workspace(owner)
    secret = f"members only {uuid.uuid4().hex}"
    assert api.save(owner, ws, secret, 0).status_code == 200
    sign_in(page, gateway_url, new_user("stranger"))
    open_workspace(page, ws)
    shows_error(page, "WORKSPACE_NOT_FOUND")
    expect(page.locator("#editor")).to_be_hidden()
    assert secret not in page.content()
    assert secret not in page.evaluate("() => document.getElementById('draft').value")


def test_bad_input_shows_the_stable_error_and_changes_nothing(
    page: Page, api: Api, gateway_url: str, resources: LocalResources
) -> None:
    owner = new_user("owner")
    ws = api.workspace(owner)
    api.call("PUT", f"/v1/workspaces/{ws}/ai", user=owner, json={"enabled": True})
    assert api.save(owner, ws, "small\n", 0).status_code == 200
    opened(page, gateway_url, owner, ws)

    before = scan_all(resources)
    draft(page).fill("x" * (70 * 1024))
    page.get_by_role("button", name="Save", exact=True).click()
    shows_error(page, "PAYLOAD_TOO_LARGE")
    expect(page.locator("#dirty")).to_contain_text("Unsaved changes")  # the draft is kept, not saved
    assert scan_all(resources) == before

    page.get_by_role("button", name="Open key session").click()
    expect(page.locator("#status")).to_have_text("Key session opened.")
    page.get_by_role("button", name="Use for turns").click()
    page.get_by_role("button", name="Revoke").click()
    expect(page.locator("#key-sessions")).to_contain_text("(revoked)")
    before = scan_all(resources)
    page.get_by_label("Message", exact=True).fill("remember: never stored")
    page.get_by_role("button", name="Send").click()
    shows_error(page, "KEY_SESSION_INVALID")
    assert scan_all(resources) == before
    shot(page, "error")
