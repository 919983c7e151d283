"""Revert: Undo for an entry. A new revision with an earlier one's type and text, on the current base; the
history keeps every revision; refusals change nothing. Over the in-memory table."""

from __future__ import annotations

import pytest

from tests.unit.entries.test_entries_rules import EDITOR, OWNER, VIEWER, draft, make, snapshot
from workspace_memory.kernel.errors import (
    EntryForgotten,
    Forbidden,
    RevertToCurrent,
    RevisionNotFound,
    StaleRevision,
)

pytestmark = pytest.mark.unit


def test_a_revert_writes_the_earlier_text_as_the_next_revision() -> None:
    w = make()
    first = w.entries.create(EDITOR, w.ws, draft(summary="Fridays", body="We deploy on Fridays.", key="ops/deploy"))
    w.clock.advance(60)
    w.entries.supersede(EDITOR, w.ws, first.entry_id, draft(summary="Tuesdays", body="We deploy on Tuesdays."), 1)
    w.clock.advance(60)

    written = w.entries.revert(EDITOR, w.ws, first.entry_id, 1, 2)

    assert written.revision == 3
    view = w.entries.read(VIEWER, w.ws, first.entry_id)
    assert (view.revision, view.text.summary, view.text.body, view.text.key) == (
        3,
        "Fridays",
        "We deploy on Fridays.",
        "ops/deploy",
    )
    assert view.text.previously is not None
    assert view.text.previously.summary == "Tuesdays"  # what the revert replaced, as any revision
    history = w.entries.history(VIEWER, w.ws, first.entry_id, 10, None).rows
    assert [(r.revision, r.summary) for r in history] == [(3, "Fridays"), (2, "Tuesdays"), (1, "Fridays")]
    assert history[1].superseded_reason == "reverted to revision 1"


@pytest.mark.parametrize(
    ("user", "revision", "base", "error"),
    [
        (EDITOR, 2, 2, RevertToCurrent),
        (EDITOR, 3, 2, RevisionNotFound),
        (EDITOR, 7, 2, RevisionNotFound),
        (EDITOR, 1, 1, StaleRevision),
        (VIEWER, 1, 2, Forbidden),
    ],
)
def test_a_refused_revert_changes_nothing(user: str, revision: int, base: int, error: type[Exception]) -> None:
    w = make()
    first = w.entries.create(OWNER, w.ws, draft(summary="one"))
    w.entries.supersede(OWNER, w.ws, first.entry_id, draft(summary="two"), 1)
    before = snapshot(w)
    with pytest.raises(error):
        w.entries.revert(user, w.ws, first.entry_id, revision, base)
    assert snapshot(w) == before


def test_a_revision_past_its_retention_and_a_forgotten_chain_cannot_be_reverted_to() -> None:
    w = make()
    first = w.entries.create(OWNER, w.ws, draft(summary="one"))
    w.entries.supersede(OWNER, w.ws, first.entry_id, draft(summary="two"), 1)
    w.clock.advance(91 * 86_400)  # past the default 90-day retention of revision 1
    with pytest.raises(RevisionNotFound):
        w.entries.revert(OWNER, w.ws, first.entry_id, 1, 2)
    w.entries.forget(OWNER, w.ws, first.entry_id)
    with pytest.raises(EntryForgotten):
        w.entries.revert(OWNER, w.ws, first.entry_id, 1, 2)
