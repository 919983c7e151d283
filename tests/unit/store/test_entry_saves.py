"""An agent entry write's marker reads back and out unchanged, its answer inside (it is written once, by the
write's own transaction)."""

from __future__ import annotations

import pytest

from workspace_memory.kernel.terms import Outcome
from workspace_memory.store import keys
from workspace_memory.store.entry_saves import SavedAnswer, SaveMarker

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("answer", "stored"),
    [
        (
            SavedAnswer(Outcome.COMMITTED, entry_id="en_1", revision=2, superseded=True),
            {"outcome": "committed", "superseded": True, "entryId": "en_1", "revision": 2},
        ),
        (
            SavedAnswer(Outcome.PROPOSAL, entry_id="en_1", candidate_id="ec_1"),
            {"outcome": "proposal", "superseded": False, "entryId": "en_1", "candidateId": "ec_1"},
        ),
    ],
    ids=["committed", "forget proposal"],
)
def test_a_marker_reads_back_and_out_unchanged(answer: SavedAnswer, stored: dict[str, object]) -> None:
    item = {
        **keys.as_key(keys.entry_save("ws_1", "ab" * 32)),
        "admissionId": "adm_1",
        "requestHash": "cd" * 32,
        "answer": stored,
        "createdAt": "2027-01-15T08:00:00.000Z",
        "ttl": 1_800_000_000,
    }
    marker = SaveMarker.from_item(item)
    assert marker.answer == answer
    assert marker.to_item() == item
