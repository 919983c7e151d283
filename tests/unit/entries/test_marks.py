"""A person's marks on an entry over the in-memory table: the pin (agents read a pinned chain, never write over
it: `ENTRY_PINNED`, nothing stored changes) and the verification (who confirmed the current revision, reset by
the next one)."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from tests.memory_table import MemoryTable
from tests.unit.entries.test_entries_rules import EDITOR, OWNER, VIEWER, World, draft, make, snapshot
from workspace_memory.entries.model import Author, Filters
from workspace_memory.entries.service import EntryService
from workspace_memory.kernel.errors import EntryForgotten, EntryNotFound, EntryPinned, Forbidden, StaleRevision
from workspace_memory.kernel.terms import EntryScope
from workspace_memory.store import entry_queries, keys
from workspace_memory.store.changes import Change, MarkEntryHead
from workspace_memory.store.entry_records import EntryRecord
from workspace_memory.turns.admission import AdmissionRef
from workspace_memory.workspaces.access import load_caller

pytestmark = pytest.mark.unit

ADMISSION = AdmissionRef("conv", "ws", EDITOR, None).encode("adm_" + "0" * 24)
"""An admission id as the service issues them: it names its key session (none here), whose write window counts."""
AGENT = Author(EDITOR, "agent", ADMISSION, rated=True)


def pinned_chain(w: World, key: str | None = "ops/deploy") -> str:
    entry_id = w.entries.create(OWNER, w.ws, draft(summary="Fridays", key=key)).entry_id
    w.entries.pin(OWNER, w.ws, entry_id, 1, pinned=True)
    return entry_id


def test_a_pin_shows_on_the_read_and_the_list_and_is_a_plain_boolean() -> None:
    w = make()
    entry_id = pinned_chain(w)
    assert w.table.items[keys.entry(w.ws, entry_id)]["pinned"] is True
    assert "pinned" not in w.table.items[keys.entry_revision(w.ws, entry_id, 1)]
    assert w.entries.read(VIEWER, w.ws, entry_id).pinned is True
    (row,) = w.entries.list_entries(VIEWER, w.ws, Filters(), 10, None).rows
    assert row.pinned is True
    marked = w.entries.pin(EDITOR, w.ws, entry_id, 1, pinned=False)
    assert (marked.pinned, marked.revision) == (False, 1)
    assert "pinned" not in w.table.items[keys.entry(w.ws, entry_id)]
    assert w.entries.list_entries(VIEWER, w.ws, Filters(), 10, None).rows[0].pinned is False


def test_an_agents_supersession_through_the_key_is_refused_and_changes_nothing() -> None:
    w = make()
    pinned_chain(w)
    caller, _ = load_caller(w.table, w.ws, EDITOR)
    before = snapshot(w)
    with pytest.raises(EntryPinned):
        w.entries.create_fenced(caller, draft(summary="Tuesdays", key="ops/deploy"), AGENT, [])
    assert snapshot(w) == before


def test_an_agents_proposals_over_a_pinned_chain_are_refused_and_change_nothing() -> None:
    w = make()
    entry_id = pinned_chain(w)
    caller, _ = load_caller(w.table, w.ws, EDITOR)
    before = snapshot(w)
    with pytest.raises(EntryPinned):  # a save through the chain's key
        w.entries.propose(EDITOR, w.ws, draft(summary="Tuesdays", key="ops/deploy"))
    with pytest.raises(EntryPinned):  # a save naming the chain (judged in the transaction)
        w.entries.propose(EDITOR, w.ws, draft(summary="Tuesdays"), entry_id=entry_id, base_revision=1)
    with pytest.raises(EntryPinned):
        w.entries.propose_forget(caller, entry_id, ADMISSION, [], member_check=True)
    assert snapshot(w) == before


def test_a_candidate_made_before_the_pin_cannot_be_accepted_over_it() -> None:
    w = make()
    entry_id = w.entries.create(OWNER, w.ws, draft(summary="Fridays", key="ops/deploy")).entry_id
    save = w.entries.propose(EDITOR, w.ws, draft(summary="Tuesdays", key="ops/deploy"))
    caller, _ = load_caller(w.table, w.ws, EDITOR)
    forget = w.entries.propose_forget(caller, entry_id, ADMISSION, [], member_check=True)
    w.entries.pin(OWNER, w.ws, entry_id, 1, pinned=True)
    before = snapshot(w)
    for candidate in (save, forget):
        with pytest.raises(EntryPinned):
            w.entries.accept(OWNER, w.ws, candidate, 1)
    assert snapshot(w) == before
    w.entries.pin(OWNER, w.ws, entry_id, 1, pinned=False)
    assert w.entries.accept(OWNER, w.ws, save, 1).revision == 2  # unpinned: the person's decision goes through


def test_a_person_still_edits_a_pinned_entry_and_the_pin_survives() -> None:
    w = make()
    entry_id = pinned_chain(w)
    assert w.entries.supersede(EDITOR, w.ws, entry_id, draft(summary="Tuesdays"), 1).revision == 2
    view = w.entries.read(VIEWER, w.ws, entry_id)
    assert (view.revision, view.text.summary, view.pinned) == (2, "Tuesdays", True)
    assert w.entries.revert(EDITOR, w.ws, entry_id, 1, 2).revision == 3
    assert w.entries.read(VIEWER, w.ws, entry_id).pinned is True
    w.entries.forget(OWNER, w.ws, entry_id)  # a person may forget a pinned entry
    with pytest.raises(EntryForgotten):
        w.entries.read(VIEWER, w.ws, entry_id)


def test_an_agent_write_that_read_the_head_before_the_pin_is_refused_by_the_transaction() -> None:
    """The pin lands between the agent's read of the head and its transaction: the head move's condition
    refuses it, and the refusal is the pin, not a stale revision."""
    w = make()
    entry_id = w.entries.create(OWNER, w.ws, draft(summary="Fridays", key="ops/deploy")).entry_id  # the secret made
    caller, _ = load_caller(w.table, w.ws, EDITOR)
    head = entry_queries.entry_head(w.table, w.ws, entry_id)
    assert isinstance(head, EntryRecord)
    w.entries.pin(OWNER, w.ws, entry_id, 1, pinned=True)
    before = snapshot(w)
    with pytest.raises(EntryPinned):
        w.entries._writes.next_revision(caller, head, 1, draft(summary="Tuesdays"), AGENT, [], fence=[])
    assert snapshot(w) == before


@pytest.mark.parametrize(
    ("user", "base", "target", "error"),
    [
        (EDITOR, 2, None, StaleRevision),
        (VIEWER, 1, None, Forbidden),
        (EDITOR, 1, "en_000000000000000000000000", EntryNotFound),
    ],
)
def test_a_refused_mark_changes_nothing(user: str, base: int, target: str | None, error: type[Exception]) -> None:
    w = make()
    entry_id = w.entries.create(OWNER, w.ws, draft()).entry_id
    before = snapshot(w)
    with pytest.raises(error):
        w.entries.pin(user, w.ws, target or entry_id, base, pinned=True)
    with pytest.raises(error):
        w.entries.verify(user, w.ws, target or entry_id, base)
    assert snapshot(w) == before


def test_another_members_private_entry_cannot_be_marked() -> None:
    w = make()
    entry_id = w.entries.create(EDITOR, w.ws, draft(scope=EntryScope.MEMBER)).entry_id
    with pytest.raises(EntryNotFound):
        w.entries.pin(OWNER, w.ws, entry_id, 1, pinned=True)
    assert w.entries.pin(EDITOR, w.ws, entry_id, 1, pinned=True).pinned is True  # her own, any role


def test_verification_names_who_and_when_and_the_next_revision_drops_it() -> None:
    w = make()
    entry_id = w.entries.create(OWNER, w.ws, draft(summary="Fridays")).entry_id
    w.clock.advance(60)
    marked = w.entries.verify(EDITOR, w.ws, entry_id, 1)
    assert marked.verified_by == EDITOR
    assert marked.verified_at is not None
    view = w.entries.read(VIEWER, w.ws, entry_id)
    assert (view.verified_at, view.verified_by) == (marked.verified_at, EDITOR)
    (row,) = w.entries.list_entries(VIEWER, w.ws, Filters(), 10, None).rows
    assert (row.verified_at, row.verified_by) == (marked.verified_at, EDITOR)
    w.entries.supersede(OWNER, w.ws, entry_id, draft(summary="Tuesdays"), 1)
    fresh = w.entries.read(VIEWER, w.ws, entry_id)
    assert (fresh.verified_at, fresh.verified_by) == (None, None)
    assert not {"verifiedAt", "verifiedBy"} & set(w.table.items[keys.entry(w.ws, entry_id)])


class PinnedMeanwhile(MemoryTable):
    """Pins `chain` (workspace, entry) just before the next transaction: the window between a write's read of the
    head and its commit."""

    def __init__(self) -> None:
        super().__init__()
        self.chain: tuple[str, str] | None = None

    def transact(self, changes: Sequence[Change]) -> None:
        if self.chain is not None:
            (workspace_id, entry_id), self.chain = self.chain, None
            super().transact([MarkEntryHead(workspace_id, entry_id, 1, pinned=True)])
        super().transact(changes)


def test_a_pin_landing_under_a_persons_revision_is_kept() -> None:
    w = make()
    table = PinnedMeanwhile()
    table.items = w.table.items
    entries = EntryService(table, w.cipher, w.clock)
    entry_id = entries.create(OWNER, w.ws, draft(summary="Fridays")).entry_id
    table.chain = (w.ws, entry_id)
    assert entries.supersede(EDITOR, w.ws, entry_id, draft(summary="Tuesdays"), 1).revision == 2
    head = table.items[keys.entry(w.ws, entry_id)]
    assert (head["revision"], head["pinned"]) == (2, True)
