"""The list and the read say how often an entry was read and how big it is (seed 002's `list`): counts are the
chain's, advisory, bumped off the read's path. Over the in-memory table."""

from __future__ import annotations

import pytest

from tests.unit.entries.test_entries_rules import EDITOR, VIEWER, draft, make
from workspace_memory.entries.model import Filters
from workspace_memory.kernel.clock import iso

pytestmark = pytest.mark.unit


def test_reads_and_sizes_reach_the_list_and_the_read() -> None:
    w = make()
    read_one = w.entries.create(EDITOR, w.ws, draft("Deploys", summary="deploy day", body="We deploy on Fridays."))
    never = w.entries.create(EDITOR, w.ws, draft("Pager", summary="rotation", body="Weekly — Monday to Monday."))
    assert w.entries.read(VIEWER, w.ws, read_one.entry_id).reads == 0
    w.entries.read(VIEWER, w.ws, read_one.entry_id)
    w.clock.advance(60)
    w.entries.read(EDITOR, w.ws, read_one.entry_id)
    w.entries.flush_read_counts()

    rows = {r.entry_id: r for r in w.entries.list_entries(VIEWER, w.ws, Filters(), 10, None).rows}
    assert (rows[read_one.entry_id].reads, rows[read_one.entry_id].last_read_at) == (3, iso(w.clock.now()))
    assert (rows[never.entry_id].reads, rows[never.entry_id].last_read_at) == (0, None)
    assert rows[read_one.entry_id].size_bytes == len("Deploysdeploy dayWe deploy on Fridays.")
    assert rows[never.entry_id].size_bytes == len(
        "PagerrotationWeekly — Monday to Monday.".encode()
    )  # bytes, not characters
    view = w.entries.read(VIEWER, w.ws, read_one.entry_id)
    assert (view.reads, view.last_read_at) == (3, iso(w.clock.now()))  # this read is not yet counted
    w.entries.flush_read_counts()  # a bump landing while a revision moves the head may be lost: counts are advisory

    w.entries.supersede(EDITOR, w.ws, read_one.entry_id, draft("Deploys", summary="deploy on Tuesdays"), 1)
    w.entries.flush_read_counts()
    moved = w.entries.list_entries(VIEWER, w.ws, Filters(), 10, None).rows
    assert next(r for r in moved if r.entry_id == read_one.entry_id).reads == 4  # the chain keeps its count
    history = w.entries.history(VIEWER, w.ws, read_one.entry_id, 10, None).rows
    assert [(r.reads, r.size_bytes) for r in history] == [(None, None), (None, None)]
