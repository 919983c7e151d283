"""An agent entry write's marker reads back and out unchanged, pending and once its answer is recorded."""

from __future__ import annotations

from dataclasses import replace

import pytest

from workspace_memory.kernel.terms import Outcome
from workspace_memory.store import keys
from workspace_memory.store.entry_saves import SavedAnswer, SaveMarker

pytestmark = pytest.mark.unit


def test_a_marker_reads_back_and_out_unchanged_pending_and_done() -> None:
    pending = {
        **keys.as_key(keys.entry_save("ws_1", "ab" * 32)),
        "admissionId": "adm_1",
        "requestHash": "cd" * 32,
        "status": "pending",
        "outcome": "committed",
        "candidate": False,
        "createdAt": "2027-01-15T08:00:00.000Z",
        "ttl": 1_800_000_000,
    }
    marker = SaveMarker.from_item(pending)
    assert (marker.outcome, marker.answer) == (Outcome.COMMITTED, None)
    assert marker.to_item() == pending
    done = replace(marker, answer=SavedAnswer(Outcome.COMMITTED, entry_id="en_1", revision=2)).to_item()
    assert done == {
        **pending,
        "status": "done",
        "answer": {"outcome": "committed", "superseded": False, "entryId": "en_1", "revision": 2},
    }
    assert SaveMarker.from_item(done).answer == SavedAnswer(Outcome.COMMITTED, entry_id="en_1", revision=2)
