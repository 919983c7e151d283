"""A superseded statement is never asserted alone: the revision that replaced it carries it, one hop, as a
dated note (seed 001), in the read, in recall's index and in selective recall (built from the search index, from
the revisions or from its snapshot). Over the in-memory table."""

from __future__ import annotations

import pytest

from tests.unit.entries.test_entries_rules import EDITOR, OWNER, VIEWER, draft, make
from workspace_memory.entries.index import build_index
from workspace_memory.entries.model import PREVIOUSLY_MAX_CHARS
from workspace_memory.search.embedders import LocalEmbedder
from workspace_memory.search.entry_search import SearchService
from workspace_memory.turns.recall import build_selection

pytestmark = pytest.mark.unit


def test_the_replacing_revision_carries_what_it_replaced_with_its_date() -> None:
    w = make()
    first = w.entries.create(EDITOR, w.ws, draft(summary="we deploy on Fridays"))
    assert w.entries.read(VIEWER, w.ws, first.entry_id).text.previously is None  # a first revision replaced nothing
    w.clock.advance(86_400 * 3)
    w.entries.supersede(EDITOR, w.ws, first.entry_id, draft(summary="we deploy on Tuesdays"), 1)

    view = w.entries.read(VIEWER, w.ws, first.entry_id)
    assert view.text.previously is not None
    assert view.text.previously.summary == "we deploy on Fridays"
    assert view.text.previously.until == view.valid_from  # replaced the moment this revision became current
    line = next(
        line
        for line in build_index(w.table, w.cipher, w.ws, VIEWER, now=w.clock.now()).text.splitlines()
        if first.entry_id in line
    )
    until = view.valid_from[:10]
    assert (
        line
        == f'- Deploys — we deploy on Tuesdays [previously, until {until}: "we deploy on Fridays"] [{first.entry_id}]'
    )


def test_the_note_is_one_hop_and_bounded() -> None:
    w = make()
    first = w.entries.create(OWNER, w.ws, draft(summary="alpha"))
    w.entries.supersede(OWNER, w.ws, first.entry_id, draft(summary="two " + "x" * 190), 1)
    w.entries.supersede(OWNER, w.ws, first.entry_id, draft(summary="three"), 2)
    previously = w.entries.read(OWNER, w.ws, first.entry_id).text.previously
    assert previously is not None
    assert previously.summary == ("two " + "x" * 190)[:PREVIOUSLY_MAX_CHARS]  # revision 2's, not revision 1's
    index = build_index(w.table, w.cipher, w.ws, OWNER, now=w.clock.now()).text
    assert "alpha" not in index  # revision 1 is two hops away: not in the index


@pytest.mark.parametrize("snapshot_after", [None, 1], ids=["from the revisions", "from the snapshot"])
def test_selective_recall_shows_the_note_and_never_the_replaced_statement_alone(snapshot_after: int | None) -> None:
    w = make()
    first = w.entries.create(EDITOR, w.ws, draft(summary="we deploy on Fridays", body="Releases go out weekly."))
    w.clock.advance(86_400)
    w.entries.supersede(
        EDITOR, w.ws, first.entry_id, draft(summary="we deploy on Tuesdays", body="Releases go out weekly."), 1
    )
    if snapshot_after is not None:  # one process stores the snapshot, a cold one builds from it
        SearchService(w.table, w.cipher, w.clock, LocalEmbedder(), snapshot_after=snapshot_after).search(
            VIEWER, w.ws, "deploy", k=5
        )
    search = SearchService(w.table, w.cipher, w.clock, LocalEmbedder(), snapshot_after=snapshot_after)

    results = search.search(VIEWER, w.ws, "when do we deploy", k=5)
    selection = build_selection(results).text

    if snapshot_after is not None:
        assert search.last_build is not None
        assert search.last_build.from_snapshot
    until = w.entries.read(VIEWER, w.ws, first.entry_id).valid_from[:10]
    note = f'we deploy on Tuesdays [previously, until {until}: "we deploy on Fridays"] [{first.entry_id}]'
    assert note in selection
    assert selection.count("Fridays") == 1  # only inside the note
