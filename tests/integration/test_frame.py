"""The memory frame in a real browser: Debian's headless Chromium driven by Playwright, against the local stack
(gateway, moto server, real encryption; a real Temporal worker with the scripted model for the turn).

Each test acts through the page and checks the outcome through the API or a scan of the table. The browser is
never downloaded: `/usr/bin/chromium` (or `WM_CHROMIUM`) must exist, else these tests fail with how to get it;
`WM_SKIP_BROWSER_TESTS=1` skips them instead (a local choice, never set in CI). Screenshots of the main views
are taken in a temporary folder; `WM_SCREENSHOTS=docs/screenshots` refreshes the README's (a run never
rewrites tracked files unasked).
"""

from __future__ import annotations

import hashlib
import importlib.resources
import os
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
from playwright.sync_api import Browser, Locator, Page, Playwright, Request, Route, expect, sync_playwright

from scripts.localstack.resources import LocalResources
from tests.support import RUNTIME, Api, admission_headers, new_user, scan_all
from workspace_memory.kernel.settings import Settings

pytestmark = [pytest.mark.integration, pytest.mark.slow]

SCREENSHOTS = Path(os.environ.get("WM_SCREENSHOTS") or tempfile.mkdtemp(prefix="wm-screenshots-"))
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
AXE = (importlib.resources.files("axe_playwright_python") / "axe.min.js").read_text(encoding="utf-8")
"""axe-core as the `axe-playwright-python` dev dependency ships it (docs/decisions/0062): never from the network."""
WIDTHS = {"narrow": 390, "wide": 1440}


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


def sign_in(page: Page, gateway_url: str, user: str) -> None:
    page.goto(f"{gateway_url}/app/")
    page.get_by_label("Dev user (local stack)").fill(user)
    page.get_by_role("button", name="Sign in").click()
    expect(page.locator("#whoami")).to_have_text(f"Signed in as {user}.")


def switcher(page: Page) -> None:
    """The workspace forms, folded away while a workspace is open: unfolded as a person would."""
    if not page.locator("#ws-switch").evaluate("d => d.open"):
        page.get_by_text("Switch to another workspace, or create one").click()


def open_workspace(page: Page, ws: str) -> None:
    switcher(page)
    page.get_by_label("Workspace id").fill(ws)
    page.get_by_role("button", name="Open", exact=True).click()


def opened(page: Page, gateway_url: str, user: str, ws: str) -> Page:
    sign_in(page, gateway_url, user)
    open_workspace(page, ws)
    expect(page.locator("#status")).to_have_text(f"Opened workspace {ws}.")
    return page


def draft(page: Page) -> Any:
    return page.get_by_label("Memory document (Markdown)")


def go(page: Page, view: str) -> None:
    """To one of the views through the navigation (one view is shown at a time)."""
    page.get_by_role("navigation", name="Views").get_by_role("link", name=view).click()
    expect(page.get_by_role("navigation", name="Views").get_by_role("link", name=view)).to_have_attribute(
        "aria-current", "page"
    )


def shows_error(page: Page, code: str, says: str | None = None) -> None:
    """The alert says what happened in words (`says`, when given); the stable code is only in its details line."""
    expect(page.get_by_role("alert").locator("#error-code")).to_contain_text(code)
    headline = page.get_by_role("alert").locator("#error-text")
    expect(headline).not_to_be_empty()
    expect(headline).not_to_contain_text(code)
    if says is not None:
        expect(headline).to_contain_text(says)


def shot(page: Page, name: str) -> None:
    """The page as shown, at the width of its viewport (`<name>-<width>.png`)."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    width = page.viewport_size["width"] if page.viewport_size else 0
    page.screenshot(path=str(SCREENSHOTS / f"{name}-{width}.png"), full_page=True)


def assert_accessible(page: Page) -> None:
    """axe-core on what the page shows now: no violation of any rule it runs by default (WCAG A/AA and best
    practice); its CSP does not apply to what the test evaluates, so the page's own stays strict."""
    if not page.evaluate("() => typeof window.axe === 'object'"):
        page.evaluate(AXE)
    found = page.evaluate(
        "async () => (await axe.run(document, {resultTypes: ['violations']})).violations"
        ".map(v => ({id: v.id, impact: v.impact, targets: v.nodes.map(n => n.target.join(' '))}))"
    )
    assert found == [], found


def assert_fits(page: Page) -> None:
    """Nothing wider than the viewport: no sideways scrolling."""
    width = page.viewport_size["width"] if page.viewport_size else 0
    scroll = page.evaluate("() => document.documentElement.scrollWidth")
    assert scroll <= width, f"the page is {scroll} px wide in a {width} px viewport"


def ai_workspace(api: Api, owner: str, memory: str | None = None) -> str:
    """A workspace of `owner`'s with the workspace AI on (policy read_only, as every new one), holding `memory` as
    version 1 when given: where a turn through the page can run."""
    ws = api.workspace(owner)
    assert api.call("PUT", f"/v1/workspaces/{ws}/ai", user=owner, json={"enabled": True}).status_code == 200
    if memory is not None:
        assert api.save(owner, ws, memory, 0).status_code == 200
    return ws


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
    assert_accessible(page)


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
    shows_error(page, "STALE_BASE_VERSION", "Someone saved a newer version while you were editing.")
    expect(page.locator("#conflict")).to_be_visible()
    expect(page.get_by_label("Newer text (version 2)")).to_have_value("theirs\n")
    changes = page.get_by_role("figure", name="What your draft changes in the newer text")
    expect(changes.locator(".del")).to_have_text(["- theirs"])
    expect(changes.locator(".add")).to_have_text(["+ mine"])
    assert_accessible(page)
    expect(draft(page)).to_have_value("mine\n")
    assert scan_all(resources) == before
    assert api.read(owner, ws)["content"] == "theirs\n"

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

    go(page, "Settings")
    page.get_by_label("Memory policy").select_option("auto")
    page.get_by_role("button", name="Set policy").click()
    expect(page.locator("#status")).to_have_text("Policy is auto.")
    conv = f"conv-{uuid.uuid4().hex[:8]}"
    go(page, "Chat")
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
    assert_accessible(page)

    go(page, "Changes")
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
    assert_accessible(page)

    go(page, "Chat")
    page.get_by_role("button", name="Load receipts").click()
    open_buttons = page.get_by_role("button", name="Open revision")
    expect(open_buttons.first).to_be_visible()
    receipts = api.call("GET", f"/v1/conversations/{conv}/memory-receipts", user=owner).json()["receipts"]
    first_revision = receipts[0]["revision"]
    assert first_revision == 2  # the first model call was given version 2
    open_buttons.first.click()
    expect(page.get_by_role("region", name=f"Revision {first_revision}")).to_be_visible()
    expect(page.locator("#revision-text")).to_have_text("# Team\n- deploy Tuesdays\n")
    assert_accessible(page)


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
    # Entries too: a viewer writes only private (member) entries, and the new-entry form starts there.
    go(page, "Entries")
    expect(page.locator("#entries-note")).to_have_text(
        "You can write only your own private (member) entries here: your role is viewer in a shared workspace."
    )
    expect(new_entry_form(page).get_by_label("Scope")).to_have_value("member")
    assert_accessible(page)

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
    ws = ai_workspace(api, owner)
    opened(page, gateway_url, owner, ws)
    go(page, "Settings")
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
    go(page, "Settings")
    expect(switch).not_to_be_checked()


def test_key_sessions_opened_through_the_api_are_listed(page: Page, api: Api, gateway_url: str) -> None:
    owner, bob = new_user("owner"), new_user("bob")
    ws = api.workspace(owner)
    api.add_member(owner, ws, bob, "editor")
    mine = [api.key_session(owner, ws), api.key_session(owner, ws, ["memory:read"])]
    bobs = api.key_session(bob, ws)
    opened(page, gateway_url, owner, ws)
    go(page, "Settings")
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
    assert_accessible(page)


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

    switcher(page)
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
    shows_error(page, "WORKSPACE_NOT_FOUND", "No workspace with that id is open to you.")
    expect(page.locator("#editor")).to_be_hidden()
    assert secret not in page.content()
    assert secret not in page.evaluate("() => document.getElementById('draft').value")


def test_bad_input_shows_the_stable_error_and_changes_nothing(
    page: Page, api: Api, gateway_url: str, resources: LocalResources
) -> None:
    owner = new_user("owner")
    ws = ai_workspace(api, owner, "small\n")
    opened(page, gateway_url, owner, ws)

    before = scan_all(resources)
    draft(page).fill("x" * (70 * 1024))
    page.get_by_role("button", name="Save", exact=True).click()
    shows_error(page, "PAYLOAD_TOO_LARGE", "That is too large to save.")
    expect(page.locator("#dirty")).to_contain_text("Unsaved changes")  # the draft is kept, not saved
    assert scan_all(resources) == before

    go(page, "Settings")
    page.get_by_role("button", name="Open key session").click()
    expect(page.locator("#status")).to_have_text("Key session opened: memory:read.")
    page.get_by_role("button", name="Use for turns").click()
    page.get_by_role("button", name="Revoke").click()
    expect(page.locator("#key-sessions")).to_contain_text("(revoked)")
    before = scan_all(resources)
    go(page, "Chat")
    page.get_by_label("Message", exact=True).fill("remember: never stored")
    page.get_by_role("button", name="Send").click()
    shows_error(page, "KEY_SESSION_INVALID", "That key session has ended or was revoked.")
    assert scan_all(resources) == before
    assert_accessible(page)


# -- entries and candidates (docs/architecture.md#entries) -------------------------------------------------------------


EMAIL_WARNING = "Warning: it holds email \u00d71 (stored as you typed it)."
"""What the page says of a human's text holding one e-mail address (stored as typed, docs/architecture.md#redaction)."""


def entry_body(title: str, **extra: Any) -> dict[str, Any]:
    return {"scope": "workspace", "type": "fact", "title": title, "summary": "deploy day", "body": "Fridays", **extra}


def create_entry(api: Api, user: str, ws: str, body: dict[str, Any]) -> str:
    response = api.call("POST", f"/v1/workspaces/{ws}/entries", user=user, json=body)
    assert response.status_code == 201, response.text
    entry_id: str = response.json()["entryId"]
    return entry_id


def read_entry(api: Api, user: str, ws: str, entry_id: str) -> Any:
    return api.call("GET", f"/v1/workspaces/{ws}/entries/{entry_id}", user=user)


def listed_entries(api: Api, user: str, ws: str) -> list[dict[str, Any]]:
    response = api.call("GET", f"/v1/workspaces/{ws}/entries?limit=100", user=user)
    assert response.status_code == 200, response.text
    found: list[dict[str, Any]] = response.json()["entries"]
    return found


def stored_state(resources: LocalResources) -> list[dict[str, Any]]:
    """Every item, without the read counters a read bumps in the background (`readCount`, `lastReadAt`)."""
    counters = {"readCount", "lastReadAt"}
    return [{k: v for k, v in item.items() if k not in counters} for item in scan_all(resources)]


def entry_row(page: Page, entry_id: str) -> Locator:
    return page.locator(f"#entry-list tbody tr[data-entry-id='{entry_id}']")


def new_entry_form(page: Page) -> Locator:
    return page.get_by_role("form", name="New entry")


def supersede_form(page: Page) -> Locator:
    return page.get_by_role("form", name="Supersede revision")


def test_an_entry_is_created_opened_superseded_and_forgotten_through_the_page(
    page: Page, api: Api, gateway_url: str
) -> None:
    owner = new_user("owner")
    ws = api.workspace(owner)
    opened(page, gateway_url, owner, ws)
    go(page, "Entries")
    form = new_entry_form(page)
    form.get_by_label("Type").select_option("rule")
    form.get_by_label("Title").fill("Deploy day")
    form.get_by_label("Summary (one line)").fill("we deploy on Fridays")
    body = "# Deploys\n- after the canary\n- questions to ops@example.com\n"
    form.get_by_label("Body (Markdown)").fill(body)
    form.get_by_role("button", name="Add entry").click()
    status = page.locator("#status")
    expect(status).to_contain_text(f"(revision 1). {EMAIL_WARNING}")
    (created,) = listed_entries(api, owner, ws)
    entry_id = created["entryId"]
    assert (created["title"], created["type"], created["revision"]) == ("Deploy day", "rule", 1)
    assert read_entry(api, owner, ws, entry_id).json()["body"] == body  # a human's text is stored as typed
    expect(status).to_have_text(f"Created entry {entry_id} (revision 1). {EMAIL_WARNING}")
    expect(entry_row(page, entry_id)).to_contain_text("Deploy day")
    expect(form.get_by_label("Title")).to_have_value("")

    entry_row(page, entry_id).get_by_role("button", name="Open").click()
    expect(status).to_have_text(f"Entry {entry_id}, revision 1.")
    region = page.get_by_role("region", name="Entry Deploy day")
    expect(region).to_be_visible()
    expect(page.locator("#entry-revision")).to_have_text("1")
    expect(page.locator("#entry-status")).to_have_text("active")
    expect(page.locator("#entry-valid")).to_have_text(created["validFrom"])
    expect(page.get_by_label("Entry body (Markdown, shown as text)")).to_have_text(body)
    expect(page.get_by_label("Citations")).to_have_text("No citations.")

    page.get_by_role("button", name="Supersede").click()
    revise = supersede_form(page)
    expect(revise).to_be_visible()
    expect(revise.get_by_label("Summary (one line)")).to_have_value("we deploy on Fridays")
    revise.get_by_label("Title").fill("Deploy day (moved)")
    revise.get_by_label("Summary (one line)").fill("we deploy on Tuesdays")
    revise.get_by_label("Reason (optional)").fill("the team moved it")
    revise.get_by_role("button", name="Save new revision").click()
    expect(status).to_have_text(  # the body kept its address: the warning is said again
        f"Superseded: entry {entry_id} is at revision 2. {EMAIL_WARNING}"
    )
    expect(page.locator("#entry-revision")).to_have_text("2")
    expect(page.locator("#entry-title")).to_have_text("Deploy day (moved)")
    current = read_entry(api, owner, ws, entry_id).json()
    assert (current["revision"], current["summary"], current["body"]) == (2, "we deploy on Tuesdays", body)
    expect(entry_row(page, entry_id)).to_contain_text("Deploy day (moved)")

    page.get_by_role("button", name="Entry history").click()
    rows = page.locator("#entry-history tbody tr")
    expect(rows).to_have_count(2)
    assert rows.nth(0).locator("td").all_inner_texts()[:3] == ["2", "active", "Deploy day (moved)"]
    assert rows.nth(1).locator("td").all_inner_texts()[:3] == ["1", "superseded", "Deploy day"]
    expect(rows.nth(1)).to_contain_text("the team moved it")
    assert_accessible(page)

    page.get_by_role("button", name="Forget", exact=True).click()
    confirm = page.get_by_role("region", name="Forget this entry?")
    expect(confirm).to_be_visible()
    expect(page.get_by_role("button", name="Keep it")).to_be_focused()
    assert read_entry(api, owner, ws, entry_id).status_code == 200  # nothing forgotten before the confirm
    page.get_by_role("button", name="Forget every revision").click()
    expect(status).to_have_text(f"Entry {entry_id} forgotten: every revision deleted.")
    expect(page.locator("#entry-list tbody tr")).to_have_count(0)
    expect(region).to_be_hidden()
    gone = read_entry(api, owner, ws, entry_id)
    assert (gone.status_code, gone.json()["error"]["code"]) == (410, "ENTRY_FORGOTTEN")
    assert listed_entries(api, owner, ws) == []


def test_a_stale_supersede_says_so_reloads_and_loses_nothing(
    page: Page, api: Api, gateway_url: str, resources: LocalResources
) -> None:
    owner = new_user("owner")
    ws = api.workspace(owner)
    entry_id = create_entry(api, owner, ws, entry_body("Deploys"))
    opened(page, gateway_url, owner, ws)
    go(page, "Entries")
    entry_row(page, entry_id).get_by_role("button", name="Open").click()
    expect(page.locator("#entry-revision")).to_have_text("1")
    page.get_by_role("button", name="Supersede").click()
    revise = supersede_form(page)
    revise.get_by_label("Summary (one line)").fill("mine")

    theirs = {"type": "fact", "title": "Deploys", "summary": "theirs", "body": "Tuesdays"}
    changed = api.call(
        "PUT", f"/v1/workspaces/{ws}/entries/{entry_id}", user=owner, json=theirs, headers={"X-Base-Revision": "1"}
    )
    assert changed.status_code == 200, changed.text
    before = stored_state(resources)
    revise.get_by_role("button", name="Save new revision").click()
    shows_error(page, "STALE_REVISION")
    stale = page.get_by_role("region", name="This entry changed since you opened it")
    expect(stale).to_contain_text("made on revision 1, but revision 2 is current now")
    expect(stale).to_contain_text("Nothing was saved and nothing was overwritten.")
    expect(page.locator("#entry-revision")).to_have_text("2")  # reloaded: the newer revision is shown
    expect(page.locator("#entry-summary")).to_have_text("theirs")
    expect(revise.get_by_label("Summary (one line)")).to_have_value("mine")  # the draft is kept
    expect(page.locator("#supersede-base")).to_have_text("2")
    assert stored_state(resources) == before
    current = read_entry(api, owner, ws, entry_id).json()
    assert (current["revision"], current["summary"], current["body"]) == (2, "theirs", "Tuesdays")
    assert_accessible(page)

    revise.get_by_role("button", name="Save new revision").click()  # now on the revision shown: 2
    expect(page.locator("#status")).to_have_text(f"Superseded: entry {entry_id} is at revision 3.")
    assert read_entry(api, owner, ws, entry_id).json()["summary"] == "mine"


def test_a_members_private_entry_never_reaches_another_members_page(page: Page, api: Api, gateway_url: str) -> None:
    owner, alice = new_user("owner"), new_user("alice")
    ws = api.workspace(owner)
    api.add_member(owner, ws, alice, "editor")
    marker = f"alice-private-{uuid.uuid4().hex}"
    private = create_entry(api, alice, ws, entry_body(marker, scope="member", summary=marker, body=marker))
    shared = create_entry(api, owner, ws, entry_body("Shared with the team"))

    opened(page, gateway_url, owner, ws)  # the owner: the most any other member can see
    go(page, "Entries")
    expect(entry_row(page, shared)).to_be_visible()
    expect(page.locator("#entry-list tbody tr")).to_have_count(1)
    listing = page.get_by_role("form", name="Filter entries")
    listing.get_by_label("Scope").select_option("member")
    listing.get_by_role("button", name="List entries").click()
    expect(page.locator("#status")).to_have_text("0 entries.")
    expect(page.locator("#entry-list tbody tr")).to_have_count(0)
    page.get_by_label("Entry id").fill(private)
    page.get_by_role("button", name="Open entry").click()
    shows_error(page, "ENTRY_NOT_FOUND")
    expect(page.locator("#entry")).to_be_hidden()
    assert marker not in page.content()

    opened(page, gateway_url, alice, ws)  # its author does see it: the marker is real
    go(page, "Entries")
    expect(entry_row(page, private)).to_contain_text(marker)


def test_more_pages_through_the_list(page: Page, api: Api, gateway_url: str) -> None:
    owner = new_user("owner")
    ws = api.workspace(owner)
    ids = {create_entry(api, owner, ws, entry_body(f"Entry {i}")) for i in range(21)}
    opened(page, gateway_url, owner, ws)
    go(page, "Entries")
    rows = page.locator("#entry-list tbody tr")
    expect(rows).to_have_count(20)
    more = page.get_by_role("button", name="More entries")
    more.click()
    expect(rows).to_have_count(21)
    expect(more).to_be_hidden()
    assert {rows.nth(i).get_attribute("data-entry-id") for i in range(21)} == ids


def propose(api: Api, ws: str, user: str, title: str) -> str:
    """An agent's `save_memory` in `read_only` through the automation route: a candidate, never an entry."""
    key_session = api.key_session(user, ws)
    admitted = api.admit(f"conv-{uuid.uuid4().hex[:8]}", ws, user, key_session, key=uuid.uuid4().hex)
    assert admitted.status_code == 201, admitted.text
    assert admitted.json()["mode"] == "read_only"
    body = {"type": "fact", "title": title, "summary": "proposed by the agent", "body": "from a turn"}
    saved = api.call(
        "PUT",
        f"/v1/automation/workspaces/{ws}/entries",
        automation=RUNTIME,
        json=body,
        headers={**admission_headers(admitted.json()), "Idempotency-Key": f"save-{uuid.uuid4().hex}"},
    )
    assert saved.status_code == 200, saved.text
    assert saved.json()["outcome"] == "proposal"
    candidate_id: str = saved.json()["candidateId"]
    return candidate_id


def test_an_agents_candidate_is_accepted_or_rejected_through_the_page(page: Page, api: Api, gateway_url: str) -> None:
    owner = new_user("owner")
    ws = ai_workspace(api, owner)  # a new workspace's policy is read_only
    keep, drop = f"Keep {uuid.uuid4().hex[:6]}", f"Drop {uuid.uuid4().hex[:6]}"
    kept, dropped = propose(api, ws, owner, keep), propose(api, ws, owner, drop)
    assert listed_entries(api, owner, ws) == []

    opened(page, gateway_url, owner, ws)
    go(page, "Review inbox")
    rows = page.locator("#candidate-list > li")
    expect(rows).to_have_count(2)
    kept_row = page.locator(f"#candidate-list li[data-candidate-id='{kept}']")
    expect(kept_row).to_contain_text(keep)
    expect(kept_row).to_contain_text(f"by the agent in {owner}'s turn")
    expect(kept_row).to_contain_text("Accepting stores a new fact entry (workspace).")
    assert_accessible(page)

    kept_row.get_by_role("button", name="Accept").click()
    expect(page.locator("#status")).to_contain_text("Accepted: entry ")
    (entry,) = listed_entries(api, owner, ws)
    assert entry["title"] == keep
    expect(page.locator("#status")).to_have_text(f"Accepted: entry {entry['entryId']} (revision 1).")
    expect(rows).to_have_count(1)
    go(page, "Entries")
    expect(entry_row(page, entry["entryId"])).to_contain_text(keep)
    go(page, "Review inbox")
    assert read_entry(api, owner, ws, entry["entryId"]).json()["authorKind"] == "agent"

    page.locator(f"#candidate-list li[data-candidate-id='{dropped}']").get_by_role("button", name="Reject").click()
    expect(page.locator("#status")).to_have_text("Rejected: the candidate was dropped.")
    expect(rows).to_have_count(0)
    assert api.call("GET", f"/v1/workspaces/{ws}/candidates", user=owner).json()["candidates"] == []
    assert [e["title"] for e in listed_entries(api, owner, ws)] == [keep]


def test_stored_markup_is_shown_as_text_never_as_elements(page: Page, api: Api, gateway_url: str) -> None:
    owner = new_user("owner")
    ws = api.workspace(owner)
    opened(page, gateway_url, owner, ws)
    go(page, "Entries")
    title = '<img src=x onerror="window.pwned=1">'
    summary = "<b>bold</b> <script>window.pwned=2</script>"
    body = "<img src=y onerror=window.pwned=3>\n<iframe src=/app/></iframe>\n"
    form = new_entry_form(page)
    form.get_by_label("Title").fill(title)
    form.get_by_label("Summary (one line)").fill(summary)
    form.get_by_label("Body (Markdown)").fill(body)
    form.get_by_role("button", name="Add entry").click()
    expect(page.locator("#status")).to_contain_text("Created entry")
    (created,) = listed_entries(api, owner, ws)
    assert created["title"] == title
    row = entry_row(page, created["entryId"])
    expect(row.locator("td").nth(0)).to_have_text(title)
    expect(row.locator("td").nth(1)).to_have_text(summary)
    expect(page.locator("#entry-title")).to_have_text(title)
    expect(page.locator("#entry-summary")).to_have_text(summary)
    expect(page.locator("#entry-body")).to_have_text(body)
    assert page.locator("img, b, iframe, #entries script").count() == 0
    assert page.evaluate("() => window.pwned") is None


def test_citations_are_shown_with_their_live_state(page: Page, api: Api, gateway_url: str) -> None:
    owner = new_user("owner")
    ws = api.workspace(owner)
    assert api.save(owner, ws, "# Memory\n", 0).status_code == 200
    cited = create_entry(api, owner, ws, entry_body("Cited", body="Fridays"))
    sources = [
        {"kind": "entry", "ref": cited, "sha256": hashlib.sha256(b"Fridays").hexdigest()},
        {"kind": "document-version", "ref": "1", "sha256": hashlib.sha256(b"# Memory\n").hexdigest(), "locator": "top"},
    ]
    citing = create_entry(api, owner, ws, entry_body("Citing", sources=sources))
    opened(page, gateway_url, owner, ws)
    go(page, "Entries")
    entry_row(page, citing).get_by_role("button", name="Open").click()
    citations = page.get_by_label("Citations").locator("li")
    expect(citations).to_have_text([f"entry {cited}: ok", "document-version 1 (top): ok"])

    changed = api.call(
        "PUT",
        f"/v1/workspaces/{ws}/entries/{cited}",
        user=owner,
        json={"type": "fact", "title": "Cited", "summary": "deploy day", "body": "Mondays"},
        headers={"X-Base-Revision": "1"},
    )
    assert changed.status_code == 200, changed.text
    entry_row(page, citing).get_by_role("button", name="Open").click()  # re-checked on every read
    expect(citations).to_have_text([f"entry {cited}: changed", "document-version 1 (top): ok"])


def kb(budget: dict[str, Any]) -> str:
    """A budget's bytes as the page words them: decimal kilobytes to the nearest tenth (halves up), no `.0`."""
    whole, tenth = divmod((budget["bytes"] + 50) // 100, 10)
    return f"{whole}.{tenth}" if tenth else str(whole)


def test_the_entries_panel_shows_recalls_budgets_and_the_hidden_count(page: Page, api: Api, gateway_url: str) -> None:
    """The first page's budgets (docs/decisions/0078) in words: so many rules the rules block is full and leaves
    some out, and the index beside it; and the entries hidden because the entry they cite was forgotten. Counts
    only, as the API answers them, set as text."""
    owner = new_user("owner")
    ws = api.workspace(owner)
    long_rule = "Always " + "answer with the release checklist first " * 4
    for n in range(10):  # some 300 bytes a line: the rules block (2 KB) holds about six
        create_entry(api, owner, ws, entry_body(f"Rule {n} " + "r" * 90, type="rule", summary=long_rule[:190]))
    cited = create_entry(api, owner, ws, entry_body("Cited"))
    source = {"kind": "entry", "ref": cited, "sha256": hashlib.sha256(b"Fridays").hexdigest()}
    citing = [create_entry(api, owner, ws, entry_body(f"Citing {n}", sources=[source])) for n in range(2)]
    opened(page, gateway_url, owner, ws)
    go(page, "Entries")
    budgets = page.get_by_role("region", name="What your assistant's turns are given")
    expect(entry_row(page, citing[0])).to_be_visible()
    expect(page.locator("#entries-hidden")).to_be_hidden()  # nothing hidden yet

    assert api.call("DELETE", f"/v1/workspaces/{ws}/entries/{cited}", user=owner).status_code == 204
    page.get_by_role("form", name="Filter entries").get_by_role("button", name="List entries").click()
    expect(page.locator("#entries-hidden")).to_have_text("2 entries hidden: their cited source is gone.")
    for entry_id in citing:
        expect(entry_row(page, entry_id)).to_have_count(0)

    first = api.call("GET", f"/v1/workspaces/{ws}/entries", user=owner).json()
    rules, index = first["budgets"]["rules"], first["budgets"]["index"]
    assert (first["hidden"], rules["truncated"], index["truncated"]) == (2, True, False)
    left_out = f"{rules['leftOut']} {'entry' if rules['leftOut'] == 1 else 'entries'} left out"
    expect(budgets.locator("p").nth(0)).to_have_text(f"Rules: {rules['lines']} lines, {kb(rules)} of 2 KB — {left_out}")
    expect(budgets.locator("p").nth(1)).to_have_text(
        f"Index: {index['lines']} of 100 lines, {kb(index)} of 8 KB — nothing left out"
    )
    expect(budgets).to_contain_text("the assistant still finds it by search")
    assert rules["lines"] + rules["leftOut"] == 10  # every rule is in the block or counted out of it
    assert_accessible(page)


def test_a_candidate_over_a_rules_key_shows_its_body_and_the_diff_of_what_it_replaces(
    page: Page, api: Api, gateway_url: str
) -> None:
    """Issue 17 finding 6: the person deciding sees the candidate's body, the revision it would supersede and
    the body's diff, before accepting anything."""
    owner = new_user("owner")
    ws = ai_workspace(api, owner)  # read_only
    rule = {"scope": "workspace", "type": "rule", "key": "style/tone", "title": "Tone", "summary": "formal"}
    created = api.call("POST", f"/v1/workspaces/{ws}/entries", user=owner, json={**rule, "body": "Be formal."})
    assert created.status_code == 201, created.text
    entry_id = created.json()["entryId"]
    key_session = api.key_session(owner, ws)
    admitted = api.admit(f"conv-{uuid.uuid4().hex[:8]}", ws, owner, key_session, key=uuid.uuid4().hex)
    body = {"type": "fact", "key": "style/tone", "title": "Tone", "summary": "casual", "body": "Be casual."}
    saved = api.call(
        "PUT",
        f"/v1/automation/workspaces/{ws}/entries",
        automation=RUNTIME,
        json=body,
        headers={**admission_headers(admitted.json()), "Idempotency-Key": f"save-{uuid.uuid4().hex}"},
    )
    assert saved.json()["outcome"] == "proposal", saved.text

    opened(page, gateway_url, owner, ws)
    go(page, "Review inbox")
    row = page.locator(f"#candidate-list li[data-candidate-id='{saved.json()['candidateId']}']")
    expect(row.locator(".candidate-body")).to_have_text("key style/tone\nBe casual.")
    expect(row).to_contain_text(f"entry {entry_id} (revision 1)")
    expect(row).to_contain_text("Replaces revision 1 (rule “Tone” — formal); changes type, summary, body.")
    expect(row.locator(".candidate-diff")).to_contain_text("-Be formal.\n+Be casual.")
    assert_accessible(page)


def test_a_candidate_decided_elsewhere_says_so_and_is_not_decided_twice(page: Page, api: Api, gateway_url: str) -> None:
    owner = new_user("owner")
    ws = ai_workspace(api, owner)
    candidate = propose(api, ws, owner, "Proposed once")
    opened(page, gateway_url, owner, ws)
    go(page, "Review inbox")
    row = page.locator(f"#candidate-list li[data-candidate-id='{candidate}']")
    expect(row).to_be_visible()
    accepted = api.call("POST", f"/v1/workspaces/{ws}/candidates/{candidate}/accept", user=owner, json={"revision": 1})
    assert accepted.status_code == 200, accepted.text
    row.get_by_role("button", name="Reject").click()
    shows_error(page, "STALE_REVISION", "This was changed elsewhere since you loaded it.")
    expect(page.locator("#candidate-list > li")).to_have_count(0)  # the list was reloaded
    assert [e["title"] for e in listed_entries(api, owner, ws)] == ["Proposed once"]  # the accept stands


# -- the review inbox, chat, navigation and layout (issue 20) ----------------------------------------------------------


def ask(page: Page, message: str) -> None:
    """One turn through the Chat view, run by the worker's scripted model (`remember: …` proposes an edit)."""
    go(page, "Chat")
    page.get_by_label("Message", exact=True).fill(message)
    page.get_by_role("button", name="Send").click()
    expect(page.locator("#status")).to_have_text("Turn completed.")


def proposal_cards(page: Page) -> Locator:
    return page.locator("#proposal-list > li")


def test_an_agents_read_only_proposal_is_reviewed_and_applied_in_the_inbox(
    page: Page, api: Api, gateway_url: str, worker: Settings
) -> None:
    """Issue 20: in read_only (every new workspace's policy) the agent's remember is a proposal; the person whose
    turn it was sees it in the inbox with what applying writes, applies it, and the document has it."""
    owner = new_user("frank")
    ws = ai_workspace(api, owner, "# Team\n- deploy Fridays\n")
    assert api.call("GET", f"/v1/workspaces/{ws}/memory/policy", user=owner).json()["mode"] == "read_only"
    opened(page, gateway_url, owner, ws)
    go(page, "Review inbox")
    expect(page.locator("#proposal-list-empty")).to_have_text("No memory edits awaiting you.")
    expect(page.locator("#candidate-list-empty")).to_have_text("No entry candidates awaiting you.")
    assert_accessible(page)

    ask(page, "remember: Feature flags gate risky changes")
    assert api.read(owner, ws)["version"] == 1  # proposed, not saved
    expect(page.locator("#transcript")).to_contain_text("The agent proposed a memory edit; nothing was saved.")
    expect(page.get_by_role("link", name="Review inbox")).to_contain_text("(1)")
    page.get_by_role("link", name="Review it in the inbox").click()
    expect(page.locator("#inbox")).to_be_visible()
    (card,) = proposal_cards(page).all()
    expect(card.get_by_role("heading")).to_have_text(f"Memory edit by the agent in {owner}'s turn")
    expect(card).to_contain_text("Proposed on version 1")
    expect(card.locator(".proposal-diff .add")).to_have_text(["+ Feature flags gate risky changes"])
    assert_accessible(page)

    card.get_by_role("button", name="Apply to the memory").click()
    expect(page.locator("#status")).to_have_text("Applied: the memory is at version 2 with the agent's edit.")
    after = api.read(owner, ws)
    assert after["version"] == 2
    assert after["content"].startswith("# Team\n- deploy Fridays\n")
    assert "Feature flags gate risky changes" in after["content"]
    (version,) = [
        v
        for v in api.call("GET", f"/v1/workspaces/{ws}/memory/versions", user=owner).json()["versions"]
        if v["version"] == 2
    ]
    assert (version["op"], version["author"]) == ("save", owner)  # applied by the person, as a Save
    expect(proposal_cards(page)).to_have_count(0)
    expect(page.locator("#proposal-list-empty")).to_be_visible()
    go(page, "Memory")
    expect(draft(page)).to_have_value(after["content"])


def test_a_proposal_made_before_a_clear_is_refused_and_nothing_changes(
    page: Page, api: Api, gateway_url: str, worker: Settings, resources: LocalResources
) -> None:
    owner = new_user("frank")
    ws = ai_workspace(api, owner, "# Team\n- a line the clear removes\n")
    opened(page, gateway_url, owner, ws)
    ask(page, "remember: Proposed before the clear")
    go(page, "Memory")
    page.get_by_role("button", name="Clear", exact=True).click()
    expect(page.locator("#status")).to_have_text("Cleared: version 2 is empty.")

    go(page, "Review inbox")
    before = scan_all(resources)
    proposal_cards(page).get_by_role("button", name="Apply to the memory").click()
    shows_error(page, "PROPOSAL_CLEARED", "This proposal was made before the memory was cleared")
    expect(proposal_cards(page)).to_contain_text("Not applied: the memory was cleared after the agent proposed this.")
    expect(proposal_cards(page).get_by_role("button", name="Apply to the memory")).to_have_count(0)
    assert scan_all(resources) == before
    current = api.read(owner, ws)
    assert (current["version"], current["content"]) == (2, "")
    assert_accessible(page)
    proposal_cards(page).get_by_role("button", name="Dismiss").click()
    expect(proposal_cards(page)).to_have_count(0)


def test_a_proposal_on_a_moved_document_is_applied_only_when_asked_again(
    page: Page, api: Api, gateway_url: str, worker: Settings
) -> None:
    owner = new_user("frank")
    ws = ai_workspace(api, owner, "# Team\n")
    opened(page, gateway_url, owner, ws)
    ask(page, "remember: Proposed on version one")
    assert api.save(owner, ws, "# Team\n- saved meanwhile\n", 1).status_code == 200  # behind the page's back
    go(page, "Review inbox")
    proposal_cards(page).get_by_role("button", name="Apply to the memory").click()
    shows_error(page, "STALE_BASE_VERSION", "The memory changed since the agent proposed this (version 1 then, 2 now).")
    assert api.read(owner, ws)["content"] == "# Team\n- saved meanwhile\n"
    proposal_cards(page).get_by_role("button", name="Apply to version 2").click()
    expect(page.locator("#status")).to_have_text("Applied: the memory is at version 3 with the agent's edit.")
    content = api.read(owner, ws)["content"]
    assert "- saved meanwhile" in content
    assert "Proposed on version one" in content


def save_then_apply(page: Page, text: str) -> None:
    """Save `text` (held by `hold_saves`), then apply the inbox's one proposal while that Save is in flight."""
    go(page, "Memory")
    draft(page).fill(text)
    page.get_by_role("button", name="Save", exact=True).click()
    go(page, "Review inbox")
    proposal_cards(page).get_by_role("button", name="Apply to the memory").click()
    expect(page.locator("#status")).to_have_text("Waiting for your Save to finish before applying…")


def test_applying_a_proposal_during_a_save_waits_for_it_and_is_judged_against_it(
    page: Page, api: Api, gateway_url: str, worker: Settings
) -> None:
    """Issue 21 (Zudo): the apply is sent only once the person's Save is acknowledged. That Save moved the memory
    past the version the agent proposed on, so the apply is refused as stale: nothing lands on text the person
    has not seen saved, and the card offers to apply on the saved version."""
    owner = new_user("frank")
    ws = ai_workspace(api, owner, "# Team\n")
    opened(page, gateway_url, owner, ws)
    ask(page, "remember: Proposed during a save")
    held, applies = hold_saves(page, ws), posted(page, "/memory/proposals/apply")
    save_then_apply(page, "# Team\n- saved while applying\n")
    assert len(held) == 1
    assert applies == []  # the apply waits on the Save
    held[0].continue_()
    shows_error(page, "STALE_BASE_VERSION", "The memory changed since the agent proposed this (version 1 then, 2 now).")
    assert len(applies) == 1
    assert api.read(owner, ws)["content"] == "# Team\n- saved while applying\n"
    expect(proposal_cards(page).get_by_role("button", name="Apply to version 2")).to_be_visible()


def test_a_save_still_running_after_the_bound_refuses_the_apply(
    page: Page, api: Api, gateway_url: str, worker: Settings
) -> None:
    """The apply's wait is the send's bound (the page's clock run past it): refused with a message for people, no
    apply sent, the proposal still in the inbox."""
    owner = new_user("frank")
    ws = ai_workspace(api, owner, "# Team\n")
    page.clock.install()
    opened(page, gateway_url, owner, ws)
    ask(page, "remember: Proposed during a slow save")
    held, applies = hold_saves(page, ws), posted(page, "/memory/proposals/apply")
    save_then_apply(page, "# Team\n- a slow save\n")
    page.clock.run_for(5_000)
    shows_error(page, "APPLY_SAVE_STILL_RUNNING", "Your Save has not finished after 5 seconds, so the proposal was not")
    assert_accessible(page)
    held[0].continue_()
    expect(page.locator("#status")).to_have_text("Saved version 2.")
    assert applies == []
    assert api.read(owner, ws)["content"] == "# Team\n- a slow save\n"
    expect(proposal_cards(page)).to_have_count(1)


def test_the_transcript_keeps_line_breaks_and_shows_markdown_as_text(
    page: Page, api: Api, gateway_url: str, worker: Settings
) -> None:
    owner = new_user("frank")
    memory = "# Team\n- **deploy** on `main`\n- <img src=x onerror=window.pwned=1>\n"
    ws = ai_workspace(api, owner, memory)
    opened(page, gateway_url, owner, ws)
    ask(page, "what do we deploy?\nsecond line")
    you = page.locator("#transcript .you .said")
    expect(you).to_have_text("what do we deploy?\nsecond line")
    assert you.evaluate("e => e.getBoundingClientRect().height") > 30  # two lines, not one
    answer = page.locator("#transcript .assistant .said")
    expect(answer.locator("p").first).to_contain_text("Answer to: what do we deploy?")
    first = answer.locator("p").first.inner_text()
    assert first.startswith("Answer to: what do we deploy?\nTool results: (none)\n"), first  # its line breaks
    expect(answer.locator("li", has_text="deploy on main")).to_have_count(1)  # a list item, markup as elements
    expect(answer.locator("strong", has_text="deploy")).to_have_count(1)
    expect(answer.locator("code", has_text="main")).to_have_count(1)
    expect(answer.locator("li", has_text="<img src=x onerror=window.pwned=1>")).to_have_count(1)  # text, not an img
    assert page.locator("#transcript img").count() == 0
    assert page.evaluate("() => window.pwned") is None
    assert answer.locator("p, li").count() > 4  # blocks, not one wall of text
    assert_accessible(page)


def test_a_wrong_workspace_id_keeps_the_open_one_and_the_page_loads_without_a_404(
    page: Page, api: Api, gateway_url: str
) -> None:
    failed: list[str] = []
    page.on("response", lambda r: failed.append(f"{r.status} {r.url}") if r.status >= 400 else None)
    owner = new_user("frank")
    ws = api.workspace(owner)
    assert api.save(owner, ws, "still open\n", 0).status_code == 200
    opened(page, gateway_url, owner, ws)
    icon = page.request.get(f"{gateway_url}/app/favicon.svg")
    assert (icon.status, icon.headers["content-type"]) == (200, "image/svg+xml")
    assert failed == []  # the favicon is linked and served: no 404 on load

    open_workspace(page, "ws_does_not_exist")
    shows_error(page, "WORKSPACE_NOT_FOUND", "No workspace with that id is open to you.")
    expect(page.locator("#editor")).to_be_visible()  # the open workspace stays open
    expect(draft(page)).to_have_value("still open\n")
    assert_accessible(page)

    go(page, "Entries")
    expect(page.locator("#entry-list-empty")).to_be_visible()
    expect(page.locator("#entry-list")).to_be_hidden()
    go(page, "Settings")
    expect(page.locator("#key-sessions-empty")).to_contain_text("You have no key sessions in this workspace.")
    key_session = api.key_session(owner, ws)
    page.get_by_role("button", name="Reload key sessions").click()
    item = page.locator(f"#key-sessions li[data-key-session='{key_session}']")
    expect(item).to_contain_text(f"Key session …{key_session[-8:]}")
    assert key_session not in item.inner_text()  # shown by its end; the whole id in the title
    go(page, "Changes")
    page.get_by_role("button", name="Load history").click()
    expect(page.locator("#history tbody tr")).to_have_count(1)
    assert_accessible(page)


# -- a turn waits for the Save; what a key session may do (issue 21, issue 17) -----------------------------------------


def posted(page: Page, route_end: str) -> list[Any]:
    """The bodies of the POSTs the page sends to a route ending in `route_end`, as they leave it (a request log:
    None for a POST without a body)."""
    sent: list[Any] = []

    def log(request: Request) -> None:
        if request.method == "POST" and request.url.endswith(route_end):
            sent.append(request.post_data_json)

    page.on("request", log)
    return sent


def turn_requests(page: Page) -> list[Any]:
    return posted(page, "/turns")


def hold_saves(page: Page, ws: str) -> list[Route]:
    """Every Save (`PUT …/memory`) of the page held at the network until the test releases it; reads pass."""
    held: list[Route] = []
    page.route(
        f"**/v1/workspaces/{ws}/memory",
        lambda route: held.append(route) if route.request.method == "PUT" else route.continue_(),
    )
    return held


def save_then_send(page: Page, text: str, message: str) -> None:
    """Save `text` (held by `hold_saves`), then send `message` from Chat while that Save is in flight."""
    draft(page).fill(text)
    page.get_by_role("button", name="Save", exact=True).click()
    go(page, "Chat")
    page.get_by_label("Message", exact=True).fill(message)
    page.get_by_role("button", name="Send").click()
    expect(page.locator("#status")).to_have_text("Waiting for your Save to finish before sending…")


def receipt_statuses(api: Api, user: str, conv: str) -> set[tuple[str, int | None]]:
    """What the conversation's model calls were given: (status, revision) of each receipt."""
    receipts = api.call("GET", f"/v1/conversations/{conv}/memory-receipts", user=user).json()["receipts"]
    return {(r["status"], r.get("revision")) for r in receipts}


def test_a_send_during_a_save_waits_for_it_and_carries_the_saved_version(
    page: Page, api: Api, gateway_url: str, worker: Settings
) -> None:
    """Issue 21: the turn is sent only once the Save is acknowledged, and says which version the person saved;
    recall then gives the model that version."""
    owner = new_user("frank")
    ws = ai_workspace(api, owner, "# Team\n")
    opened(page, gateway_url, owner, ws)
    conv = page.get_by_label("Conversation id").input_value()
    held, sent = hold_saves(page, ws), turn_requests(page)
    save_then_send(page, "# Team\n- saved before the turn\n", "what do we deploy?")
    assert len(held) == 1
    assert sent == []  # the send waits on the Save
    held[0].continue_()
    expect(page.locator("#status")).to_have_text("Turn completed.")
    assert [body["memoryState"] for body in sent] == [{"state": "saved", "version": 2}]
    assert api.read(owner, ws)["version"] == 2
    assert receipt_statuses(api, owner, conv) == {("ok", 2)}
    expect(page.locator("#transcript .you .said")).to_have_text("what do we deploy?")


def test_a_save_still_running_after_the_bound_refuses_the_send(
    page: Page, api: Api, gateway_url: str, resources: LocalResources
) -> None:
    """The wait is bounded: a Save that has not settled when the bound passes (the page's clock is run past it,
    no wall-clock wait) refuses the send with a message for people, and no turn is ever sent for it."""
    owner = new_user("frank")
    ws = ai_workspace(api, owner, "# Team\n")
    page.clock.install()
    opened(page, gateway_url, owner, ws)
    held, sent = hold_saves(page, ws), turn_requests(page)
    save_then_send(page, "# Team\n- a slow save\n", "remember: never sent")
    page.clock.run_for(5_000)
    shows_error(page, "SAVE_STILL_RUNNING", "Your Save has not finished after 5 seconds, so the message was not sent")
    expect(page.get_by_label("Message", exact=True)).to_have_value("remember: never sent")  # kept for a resend
    assert_accessible(page)
    held[0].continue_()
    expect(page.locator("#status")).to_have_text("Saved version 2.")
    assert sent == []
    assert api.read(owner, ws)["version"] == 2


def test_a_failed_save_refuses_the_send_then_a_turn_says_conflict(
    page: Page, api: Api, gateway_url: str, worker: Settings
) -> None:
    """A Save that fails (here it loses to a newer version) refuses the send that waited for it; a send while
    the conflict is shown tells the turn `conflict`, so the model is not given memory the person disputes."""
    owner = new_user("frank")
    ws = ai_workspace(api, owner, "# Team\n")
    opened(page, gateway_url, owner, ws)
    conv = page.get_by_label("Conversation id").input_value()
    held, sent = hold_saves(page, ws), turn_requests(page)
    save_then_send(page, "mine\n", "what do we deploy?")
    assert api.save(owner, ws, "theirs\n", 1).status_code == 200  # behind the page's back
    held[0].continue_()
    shows_error(page, "SAVE_NOT_SAVED", "Your Save did not go through, so the message was not sent")
    assert sent == []
    go(page, "Memory")
    expect(page.locator("#conflict")).to_be_visible()
    go(page, "Chat")
    page.get_by_role("button", name="Send").click()
    expect(page.locator("#status")).to_have_text("Turn completed.")
    assert [body["memoryState"] for body in sent] == [{"state": "conflict"}]
    assert {status for status, _ in receipt_statuses(api, owner, conv)} == {"conflict"}


def key_session_bodies(page: Page) -> list[Any]:
    return posted(page, "/key-sessions")


def test_a_key_session_opened_in_the_page_has_the_scopes_chosen(page: Page, api: Api, gateway_url: str) -> None:
    """Issue 17: the page asks for what the person ticked; reading only unless they tick more."""
    owner = new_user("frank")
    ws = api.workspace(owner)
    opened(page, gateway_url, owner, ws)
    bodies = key_session_bodies(page)
    go(page, "Settings")
    expect(page.get_by_label("Read memory (memory:read)")).to_be_checked()
    expect(page.get_by_label("Working notes (notes)")).not_to_be_checked()
    page.get_by_label("Write memory: remember, propose edits and entries (memory:write)").check()
    page.get_by_role("button", name="Open key session").click()
    expect(page.locator("#status")).to_have_text("Key session opened: memory:read, memory:write.")
    assert [b["scopes"] for b in bodies] == [["memory:read", "memory:write"]]
    (listed,) = api.call("GET", f"/v1/workspaces/{ws}/key-sessions", user=owner).json()["keySessions"]
    assert listed["scopes"] == ["memory:read", "memory:write"]
    item = page.locator(f"#key-sessions li[data-key-session='{listed['keySessionId']}']")
    expect(item).to_contain_text("[memory:read, memory:write]")
    assert_accessible(page)


def test_a_viewer_is_offered_reading_only(page: Page, api: Api, gateway_url: str) -> None:
    owner, viewer = new_user("owner"), new_user("viewer")
    ws = api.workspace(owner)
    api.add_member(owner, ws, viewer, "viewer")
    opened(page, gateway_url, viewer, ws)
    bodies = key_session_bodies(page)
    go(page, "Settings")
    expect(page.get_by_label("Write memory: remember, propose edits and entries (memory:write)")).to_be_disabled()
    expect(page.get_by_label("Working notes (notes)")).to_be_disabled()
    page.get_by_role("button", name="Open key session").click()
    expect(page.locator("#status")).to_have_text("Key session opened: memory:read.")
    assert [b["scopes"] for b in bodies] == [["memory:read"]]


# -- the activity view: the audit trail (docs/architecture.md#the-audit-trail) --------------------------------------


def activity_rows(page: Page) -> Locator:
    return page.locator("#activity-list tbody tr")


def audit_events(api: Api, user: str, ws: str, **filters: Any) -> list[dict[str, Any]]:
    """The trail as the API answers `user` (one page of up to 100 events)."""
    query = urlencode({"limit": 100, **filters})
    response = api.call("GET", f"/v1/workspaces/{ws}/audit?{query}", user=user)
    assert response.status_code == 200, response.text
    events: list[dict[str, Any]] = response.json()["events"]
    return events


def set_policy(api: Api, owner: str, ws: str, mode: str) -> None:
    revision = api.call("GET", f"/v1/workspaces/{ws}/memory/policy", user=owner).json()["policyRevision"]
    body = {"mode": mode, "expectedRevision": revision}
    assert api.call("PUT", f"/v1/workspaces/{ws}/memory/policy", user=owner, json=body).status_code == 200


def test_the_owner_sees_who_changed_what_newest_first_and_filters_by_kind(
    page: Page, api: Api, gateway_url: str
) -> None:
    owner, bob = new_user("owner"), new_user("bob")
    ws = ai_workspace(api, owner)
    api.add_member(owner, ws, bob, "editor")
    candidate = propose(api, ws, owner, "Deploys need a canary")  # the agent, in a turn of the owner's
    assert api.save(bob, ws, "bob's notes\n", 0).status_code == 200
    set_policy(api, owner, ws, "auto")
    opened(page, gateway_url, owner, ws)
    go(page, "Activity")
    rows = activity_rows(page)
    expect(rows).to_have_count(len(audit_events(api, owner, ws)))
    expect(page.locator("#activity-scope")).to_contain_text("every member's actions")
    expect(page.get_by_label("Who (a member's user id; empty for everyone)")).to_be_visible()
    expect(rows.nth(0)).to_contain_text("set policy to auto")
    expect(rows.nth(0).locator("td").nth(1)).to_have_text(owner)
    expect(rows.nth(1)).to_contain_text("saved the document (v1)")
    expect(rows.nth(1).locator("td").nth(1)).to_have_text(bob)
    expect(rows.nth(0).locator("td").nth(0)).to_have_text("just now")
    assert rows.nth(0).locator("td").nth(0).get_attribute("title", timeout=WAIT_MS)  # the exact instant
    proposed = rows.filter(has_text="proposed entry candidate")
    expect(proposed).to_have_count(1)
    expect(proposed.locator("td").nth(1)).to_contain_text(f"agent for {owner} (turn …")
    expect(proposed.locator("td").nth(3)).to_have_text(candidate)
    assert_accessible(page)

    page.get_by_label("What it changed").select_option(label="the memory document")
    page.get_by_role("button", name="Show activity").click()
    expect(rows).to_have_count(1)
    expect(rows.nth(0)).to_contain_text("saved the document (v1)")

    page.get_by_label("What it changed").select_option(label="any")
    page.get_by_label("Who (a member's user id; empty for everyone)").fill(owner)
    page.get_by_role("button", name="Show activity").click()
    expect(rows).to_have_count(len(audit_events(api, owner, ws, actor=owner)))
    expect(page.locator("#activity-list tbody td:nth-child(2)").filter(has_text=bob)).to_have_count(0)
    expect(rows.filter(has_text=f"made {bob} a member with role editor")).to_have_count(1)  # bob as a target


def test_load_more_follows_the_cursor_to_the_end(page: Page, api: Api, gateway_url: str) -> None:
    owner = new_user("owner")
    ws = api.workspace(owner)
    for version in range(21):
        assert api.save(owner, ws, f"version {version + 1}\n", version).status_code == 200
    assert api.undo(owner, ws, 20, 21).status_code == 200
    everything = [e["eventId"] for e in audit_events(api, owner, ws)]
    assert len(everything) > 22
    opened(page, gateway_url, owner, ws)
    go(page, "Activity")
    rows = activity_rows(page)
    expect(rows).to_have_count(20)  # the page's page
    more = page.get_by_role("button", name="Load more")
    expect(rows.nth(0)).to_contain_text("undid: restored an earlier version as v22")
    expect(rows.nth(1)).to_contain_text("saved the document (v21)")
    more.click()
    expect(rows).to_have_count(len(everything))
    expect(more).to_be_hidden()
    assert [rows.nth(i).get_attribute("data-event-id") for i in range(len(everything))] == everything


def test_a_member_sees_only_their_own_actions_and_no_actor_filter(page: Page, api: Api, gateway_url: str) -> None:
    owner, bob = new_user("owner"), new_user("bob")
    ws = api.workspace(owner)
    api.add_member(owner, ws, bob, "editor")
    assert api.save(owner, ws, "the owner's\n", 0).status_code == 200
    assert api.save(bob, ws, "bob's\n", 1).status_code == 200
    set_policy(api, owner, ws, "auto")
    opened(page, gateway_url, bob, ws)
    go(page, "Activity")
    rows = activity_rows(page)
    expect(rows).to_have_count(len(audit_events(api, bob, ws)))
    expect(rows.nth(0)).to_contain_text("saved the document (v2)")
    for i in range(rows.count()):
        expect(rows.nth(i).locator("td").nth(1)).to_contain_text(bob)
    expect(rows.filter(has_text="set policy")).to_have_count(0)
    expect(page.locator("#activity-scope")).to_have_text(
        "This shows your own actions and your agents' on your turns; the owner sees everyone's."
    )
    expect(page.get_by_label("Who (a member's user id; empty for everyone)")).to_be_hidden()
    assert_accessible(page)
    # The API refuses someone else's actions to a member even when asked past the page.
    code = page.evaluate(
        """async ([ws, owner]) => {
            const { api } = await import("./api.js");
            try { await api.audit(ws, { actor: owner }); return "answered"; } catch (e) { return e.code; }
        }""",
        [ws, owner],
    )
    assert code == "FORBIDDEN"


def test_a_bad_filter_says_so_and_the_list_stays_as_it_was(page: Page, api: Api, gateway_url: str) -> None:
    owner = new_user("owner")
    ws = api.workspace(owner)
    assert api.save(owner, ws, "one\n", 0).status_code == 200
    opened(page, gateway_url, owner, ws)
    go(page, "Activity")
    rows = activity_rows(page)
    expect(rows.nth(0)).to_contain_text("saved the document (v1)")
    before = page.locator("#activity-list tbody").inner_text()
    page.get_by_label("From (UTC date)").fill("2026-12-09")
    page.get_by_label("To (UTC date, inclusive)").fill("2026-12-08")
    page.get_by_role("button", name="Show activity").click()
    shows_error(page, "INVALID_REQUEST", "Some of what you entered is not valid.")
    assert page.locator("#activity-list tbody").inner_text() == before
    expect(page.get_by_role("button", name="Load more")).to_be_hidden()
    assert_accessible(page)

    page.get_by_label("From (UTC date)").fill("")
    page.get_by_label("To (UTC date, inclusive)").fill("")
    page.get_by_label("What it changed").select_option(label="working notes")  # none yet: the empty state
    page.get_by_role("button", name="Show activity").click()
    expect(page.locator("#activity-list-empty")).to_be_visible()
    expect(page.locator("#activity-list")).to_be_hidden()
    expect(page.locator("#error")).to_be_hidden()


def test_the_axe_check_fails_on_a_page_with_a_violation(page: Page) -> None:
    """The helper is not vacuous: the very violation the issue found (an empty `<pre>` with a name) is reported."""
    page.set_content(
        '<!DOCTYPE html><html lang="en"><head><title>t</title></head><body><main><h1>t</h1>'
        '<pre aria-label="Diff"></pre></main></body></html>'
    )
    with pytest.raises(AssertionError, match="aria-prohibited-attr"):
        assert_accessible(page)


VIEWS = ["Memory", "Review inbox", "Chat", "Entries", "Pages", "Changes", "Activity", "Settings"]


@pytest.mark.parametrize("width", WIDTHS.values(), ids=WIDTHS.keys())
def test_every_view_fits_the_width_with_no_axe_violation(
    browser: Browser, api: Api, gateway_url: str, worker: Settings, width: int
) -> None:
    """Each view with content in it (a proposal, a candidate, entries, history, receipts, key sessions): no
    sideways scrolling at 390 px and at 1440 px, and no axe violation. Screenshots of each view at each width."""
    owner = new_user("frank")
    ws = ai_workspace(api, owner, "# Team\n- deploy Fridays after the canary is green everywhere\n")
    create_entry(api, owner, ws, entry_body("Deploy day"))
    propose(api, ws, owner, "Release notes go to the team channel")
    api.key_session(owner, ws)
    context = browser.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    try:
        opened(page, gateway_url, owner, ws)
        ask(page, "remember: Feature flags gate risky changes")
        page.get_by_role("button", name="Load receipts").click()
        expect(page.locator("#receipts tbody tr").first).to_be_visible()
        go(page, "Changes")
        page.get_by_role("button", name="Load history").click()
        page.get_by_label("From version").fill("1")
        page.get_by_label("To version").fill("1")
        page.get_by_role("button", name="Show diff").click()
        expect(page.locator("#status")).to_have_text("Diff from version 1 to version 1.")
        go(page, "Entries")
        page.locator("#entry-list tbody tr").first.get_by_role("button", name="Open").click()
        expect(page.locator("#entry")).to_be_visible()
        for view in VIEWS:
            go(page, view)
            if view == "Activity":  # loaded on every visit
                expect(page.locator("#status")).to_contain_text("shown")
            assert_fits(page)
            assert_accessible(page)
            shot(page, view.lower().replace(" ", "-"))
        go(page, "Memory")
        assert api.save(owner, ws, "theirs\n", 1).status_code == 200
        draft(page).fill("mine\n")
        page.get_by_role("button", name="Save", exact=True).click()
        expect(page.locator("#conflict")).to_be_visible()
        assert_fits(page)
        assert_accessible(page)
        shot(page, "conflict")
    finally:
        context.close()
