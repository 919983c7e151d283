"""Pages over the in-memory table (decisions/0085): compare-and-set on every change, one page per entry, the
private rules, the stale flag judged on read, and refusals that change nothing stored."""

from __future__ import annotations

import pytest

from tests.unit.entries.test_entries_rules import EDITOR, OWNER, VIEWER, World, draft, make, snapshot
from workspace_memory.kernel.errors import EntryNotFound, Forbidden, StaleRevision
from workspace_memory.kernel.terms import EntryScope, PageScope
from workspace_memory.pages.errors import EntryAlreadyFiled, FilingScopeMismatch, InvalidPageCategory, PageNotFound
from workspace_memory.pages.model import summary_stale
from workspace_memory.pages.service import PageService
from workspace_memory.store import keys
from workspace_memory.store.attributes import violations

pytestmark = pytest.mark.unit


def pages(w: World) -> PageService:
    return PageService(w.table, w.cipher, w.clock)


def test_summary_stale_is_judged_from_what_it_was_made_from() -> None:
    assert summary_stale([], [], summary=False) is False
    assert summary_stale([("en_a", 1)], [], summary=False) is True
    assert summary_stale([("en_a", 1)], [("en_a", 1)], summary=True) is False
    assert summary_stale([("en_a", 2)], [("en_a", 1)], summary=True) is True
    assert summary_stale([], [("en_a", 1)], summary=True) is True


def test_file_summarize_then_a_new_entry_revision_makes_the_summary_stale() -> None:
    w = make()
    p = pages(w)
    entry_id = w.entries.create(EDITOR, w.ws, draft()).entry_id
    page = p.create(EDITOR, w.ws, PageScope.WORKSPACE, "topic", "Deploys", "keep it short")
    caller = p.caller(EDITOR, w.ws)
    filed = p.filing.file(caller, page.page_id, entry_id, 1)
    assert filed.revision == 2
    assert p.read(VIEWER, w.ws, page.page_id).summary_stale is True
    summarized = p.filing.set_summary(caller, page.page_id, 2, "We deploy on Fridays", [(entry_id, 1)])
    view = p.read(VIEWER, w.ws, page.page_id)
    assert (view.revision, view.summary, view.summary_stale, view.notes) == (
        3,
        "We deploy on Fridays",
        False,
        "keep it short",
    )
    assert [(r.entry_id, r.revision, r.title) for r in view.entries] == [(entry_id, 1, "Deploys")]
    w.entries.supersede(EDITOR, w.ws, entry_id, draft(summary="Tuesdays"), 1)
    assert p.read(VIEWER, w.ws, page.page_id).summary_stale is True
    assert summarized.revision == 3
    lines = p.list_pages(VIEWER, w.ws, "topic", 10, None).pages
    assert [(line.title, line.entry_count, line.summary_stale) for line in lines] == [("Deploys", 1, True)]
    assert all(violations(item) == [] for item in w.table.items.values())


def test_an_entry_is_in_one_page_and_a_stale_revision_changes_nothing() -> None:
    w = make()
    p = pages(w)
    entry_id = w.entries.create(EDITOR, w.ws, draft()).entry_id
    first = p.create(EDITOR, w.ws, PageScope.WORKSPACE, "topic", "A", None)
    second = p.create(EDITOR, w.ws, PageScope.WORKSPACE, "area", "B", None)
    caller = p.caller(EDITOR, w.ws)
    p.filing.file(caller, first.page_id, entry_id, 1)
    before = snapshot(w)
    with pytest.raises(EntryAlreadyFiled):
        p.filing.file(caller, second.page_id, entry_id, 1)
    with pytest.raises(StaleRevision):
        p.filing.unfile(caller, first.page_id, entry_id, 1)
    with pytest.raises(InvalidPageCategory):
        p.create(EDITOR, w.ws, PageScope.WORKSPACE, "nope", "C", None)
    with pytest.raises(Forbidden):
        p.create(VIEWER, w.ws, PageScope.WORKSPACE, "topic", "C", None)
    assert snapshot(w) == before
    p.filing.unfile(caller, first.page_id, entry_id, 2)
    assert p.filing.unfiled_entries(caller) == [entry_id]
    p.filing.file(caller, second.page_id, entry_id, 1)
    assert p.filing.unfiled_entries(caller) == []


def test_private_pages_and_entries_stay_their_members() -> None:
    w = make()
    p = pages(w)
    mine = w.entries.create(EDITOR, w.ws, draft(scope=EntryScope.MEMBER)).entry_id
    private = p.create(EDITOR, w.ws, PageScope.PRIVATE, "you", "Me", None)
    shared = p.create(OWNER, w.ws, PageScope.WORKSPACE, "topic", "Us", None)
    before = snapshot(w)
    with pytest.raises(PageNotFound):
        p.read(VIEWER, w.ws, private.page_id)
    with pytest.raises(PageNotFound):  # a reader never writes another's private page, whatever their role
        p.filing.file(p.caller(OWNER, w.ws), private.page_id, mine, 1)
    with pytest.raises(EntryNotFound):  # another member's private entry is not found
        p.filing.file(p.caller(OWNER, w.ws), shared.page_id, mine, 1)
    with pytest.raises(FilingScopeMismatch):  # not even its own member files it in a workspace page
        p.filing.file(p.caller(EDITOR, w.ws), shared.page_id, mine, 1)
    assert snapshot(w) == before
    assert p.list_pages(VIEWER, w.ws, None, 10, None).pages[0].page_id == shared.page_id
    p.filing.file(p.caller(EDITOR, w.ws), private.page_id, mine, 1)
    w.entries.forget(EDITOR, w.ws, mine)
    assert p.read(EDITOR, w.ws, private.page_id).entries == ()


def test_deleting_a_page_takes_its_filings_and_keeps_the_entries() -> None:
    w = make()
    p = pages(w)
    entry_id = w.entries.create(EDITOR, w.ws, draft()).entry_id
    page = p.create(EDITOR, w.ws, PageScope.WORKSPACE, "topic", "A", None)
    caller = p.caller(EDITOR, w.ws)
    p.filing.file(caller, page.page_id, entry_id, 1)
    with pytest.raises(StaleRevision):
        p.delete(EDITOR, w.ws, page.page_id, 1)
    p.delete(EDITOR, w.ws, page.page_id, 2)
    assert [k for k in w.table.items if k[1].startswith(("PAGE", "FILED#"))] == []
    assert keys.entry(w.ws, entry_id) in w.table.items
