"""Deleting a workspace, judged on the in-memory table and key store (no sockets): the tombstone and who may
write it, the confirmation, a repeat, and the purge's batches (its partition, then the items that name it
elsewhere, META last; never a live workspace)."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

import pytest

from tests.memory_table import MemoryTable
from tests.unit.turns.test_services import DOC, EDITOR, OWNER, VIEWER, World
from workspace_memory.kernel.errors import (
    ConfirmationMismatch,
    ConfirmationRequired,
    Forbidden,
    WorkspaceNotDeleted,
    WorkspaceNotFound,
)
from workspace_memory.kernel.terms import Outcome, Predicate
from workspace_memory.store import keys
from workspace_memory.turns.recall import RecallStatus
from workspace_memory.workspaces.deletion import DeletionProgress, DeletionService, WorkspacePurgeService
from workspace_memory.workspaces.deletion_contract import DeletionInput, PurgeBatchResult

pytestmark = pytest.mark.unit


@dataclass
class FakeRunner:
    """Records starts; one run per workspace (a second start of the same id is the same run)."""

    started: dict[str, DeletionInput] = field(default_factory=dict)
    starts: int = 0
    schedules_removed: list[str] = field(default_factory=list)

    def remove_schedule(self, workspace_id: str) -> None:
        self.schedules_removed.append(workspace_id)

    def start(self, deletion: DeletionInput) -> None:
        self.starts += 1
        self.started.setdefault(deletion.workspace_id, deletion)

    def progress(self, workspace_id: str) -> DeletionProgress | None:
        run = self.started.get(workspace_id)
        if run is None:
            return None
        return DeletionProgress(workspace_id, run.requested_by, "running", "started", 0, False, run.requested_at, None)


def deletion(w: World, runner: FakeRunner | None = None) -> tuple[DeletionService, FakeRunner]:
    runner = runner or FakeRunner()
    return DeletionService(w.table, w.key_store, w.clock, runner, batch_size=2, schedules=runner), runner


def test_the_owner_tombstones_destroys_the_key_and_starts_the_purge() -> None:
    w = World()
    ws = w.workspace()
    service, runner = deletion(w)
    progress = service.delete(OWNER, ws, ws)
    assert (progress.workspace_id, progress.requested_by, progress.status) == (ws, OWNER, "running")
    meta = w.table.items[keys.meta(ws)]
    assert (meta["deletedBy"], meta["aiEnabled"], meta["consentRevision"]) == (OWNER, False, 2)
    assert w.table.items[keys.head(ws)]["tombstone"] is True
    assert ws not in w.key_store.branch_keys
    assert runner.started[ws].batch_size == 2
    assert runner.started[ws].requested_at == meta["deletedAt"]
    assert runner.schedules_removed == [ws]  # its consolidation schedule goes in the same request


def test_a_workspace_never_saved_gets_a_tombstone_head() -> None:
    w = World()
    ws = w.workspace(content="")
    assert keys.head(ws) not in w.table.items
    deletion(w)[0].delete(OWNER, ws, ws)
    assert w.table.items[keys.head(ws)] == {**keys.as_key(keys.head(ws)), "headVersion": 0, "tombstone": True}


@pytest.mark.parametrize(
    ("user", "confirm", "error"),
    [
        (OWNER, None, ConfirmationRequired),
        (OWNER, "", ConfirmationRequired),
        (OWNER, "ws_other", ConfirmationMismatch),
        (EDITOR, "<ws>", Forbidden),
        (VIEWER, "<ws>", Forbidden),
        ("stranger", "<ws>", WorkspaceNotFound),
    ],
)
def test_a_refused_deletion_changes_nothing(user: str, confirm: str | None, error: type[Exception]) -> None:
    w = World()
    ws = w.workspace()
    before, keys_before = copy.deepcopy(w.table.items), dict(w.key_store.branch_keys)
    service, runner = deletion(w)
    with pytest.raises(error):
        service.delete(user, ws, ws if confirm == "<ws>" else confirm)
    assert (w.table.items, w.key_store.branch_keys, runner.starts) == (before, keys_before, 0)
    assert runner.schedules_removed == []


def test_deleting_twice_redoes_only_what_is_idempotent() -> None:
    w = World()
    ws = w.workspace()
    service, runner = deletion(w)
    first = service.delete(OWNER, ws, ws)
    after = copy.deepcopy(w.table.items)
    assert service.delete(OWNER, ws, ws) == first
    assert w.table.items == after  # no second tombstone, no new consent revision
    assert runner.starts == 2  # the start is sent again (a crash may have lost it); the runner dedupes
    with pytest.raises(WorkspaceNotFound):
        service.delete(EDITOR, ws, ws)  # the tombstone is the owner's who asked; anyone else: a missing workspace
    with pytest.raises(WorkspaceNotFound):
        service.progress(EDITOR, ws)


def test_after_the_tombstone_every_service_answers_a_missing_workspace() -> None:
    w = World()
    ws = w.workspace()
    admitted = w.admit(ws)
    deletion(w)[0].delete(OWNER, ws, ws)
    before = copy.deepcopy(w.table.items)
    for call in (
        lambda: w.document.read(OWNER, ws),
        lambda: w.document.history(OWNER, ws, 10, None),
        lambda: w.policy.get(OWNER, ws),
        lambda: w.access.set_ai(OWNER, ws, True),
        lambda: w.key_sessions.open(OWNER, ws, 3600, None),
        lambda: w.admit(ws, key="k2"),
    ):
        with pytest.raises(WorkspaceNotFound):
            call()
    recalled = w.recall.recall(ws, admitted.admission.id, admitted.credential)
    assert (recalled.status, recalled.revision) == (RecallStatus.DELETED, None)
    refused = w.capture_add(ws, admitted)
    assert (refused.outcome, refused.predicate) == (Outcome.REFUSED, Predicate.CONSENT)
    assert w.table.items == before  # no receipt for a deleted workspace's recall


def test_a_save_whose_encryption_raced_the_tombstone_is_a_missing_workspace() -> None:
    """A warm process may still hold the branch key: its Save encrypts, then loses on the tombstone head."""
    w = World()
    ws = w.workspace()

    def delete_first(table: MemoryTable) -> None:
        table.before_transact = None
        deletion(w)[0].delete(OWNER, ws, ws)

    w.table.before_transact = delete_first
    with pytest.raises(WorkspaceNotFound):
        w.document.save(OWNER, ws, DOC + "- late\n", 1)
    assert keys.version(ws, 2) not in w.table.items


def test_the_purge_goes_in_batches_meta_last_and_leaves_nothing() -> None:
    w = World()
    ws = w.workspace()
    other = w.workspace()
    admitted = w.admit(ws)
    w.recall.recall(ws, admitted.admission.id, admitted.credential)
    deletion(w)[0].delete(OWNER, ws, ws)
    purge = WorkspacePurgeService(w.table, w.key_store)
    theirs = {k for k, item in w.table.items.items() if k[0] == keys.ws(ws) or item.get("workspaceId") == ws}
    assert any(k[0].startswith("CONV#") for k in theirs)  # outside its partition: found by `workspaceId`
    assert any(k[0].startswith("ADM#") for k in theirs)
    others = {k: v for k, v in w.table.items.items() if k not in theirs}
    batches: list[PurgeBatchResult] = []
    while not batches or batches[-1].more:
        batches.append(purge.purge_batch(ws, 3))
        if batches[-1].more:
            assert keys.meta(ws) in w.table.items  # the tombstone holds until nothing else is left
    assert all(b.deleted == 3 for b in batches[:-2])
    assert 0 < batches[-2].deleted <= 3
    assert sum(b.deleted for b in batches) == len(theirs)
    assert batches[-1] == PurgeBatchResult(deleted=1, more=False)
    assert w.table.items == others
    assert w.document.read(OWNER, other).content == DOC
    # Idempotent: a batch retried after the end deletes nothing and says so.
    assert purge.purge_batch(ws, 3) == PurgeBatchResult(deleted=0, more=False)
    assert purge.destroy_branch_key(ws) == 0


def test_the_purge_refuses_a_live_workspace() -> None:
    w = World()
    ws = w.workspace()
    before, keys_before = copy.deepcopy(w.table.items), dict(w.key_store.branch_keys)
    purge = WorkspacePurgeService(w.table, w.key_store)
    with pytest.raises(WorkspaceNotDeleted):
        purge.purge_batch(ws, 100)
    with pytest.raises(WorkspaceNotDeleted):
        purge.destroy_branch_key(ws)
    assert (w.table.items, w.key_store.branch_keys) == (before, keys_before)


def test_two_deletes_racing_by_the_same_owner_both_answer_the_one_deletion() -> None:
    w = World()
    ws = w.workspace()
    service, runner = deletion(w)

    def other_delete_first(table: MemoryTable) -> None:
        table.before_transact = None
        service.delete(OWNER, ws, ws)

    w.table.before_transact = other_delete_first
    progress = service.delete(OWNER, ws, ws)
    assert progress.requested_at == w.table.items[keys.meta(ws)]["deletedAt"]
    assert w.table.items[keys.meta(ws)]["consentRevision"] == 2  # one tombstone, not two
    assert runner.starts == 2


def test_an_admission_of_a_turn_is_kept_until_its_execution_is_named_cleared() -> None:
    """A turn's history holds its messages under the stack's key: the workflow deletes the execution when a
    batch names the turn, and only the next batch, told the turn is cleared, deletes its admission."""
    w = World()
    ws = w.workspace()
    admitted = w.admit(ws)
    admission = keys.admission(admitted.admission.id)
    w.table.items[admission]["turnId"] = "turn-" + "a" * 32
    deletion(w)[0].delete(OWNER, ws, ws)
    purge = WorkspacePurgeService(w.table, w.key_store)
    named: list[list[str]] = []
    cleared: list[str] = []
    while (batch := purge.purge_batch(ws, 100, cleared)).more:
        named.append(batch.turns)
        if batch.turns:
            assert admission in w.table.items  # kept while its execution may exist
        cleared = batch.turns
    assert named[0] == ["turn-" + "a" * 32]
    assert [turns for turns in named[1:] if turns] == []  # named once, then deleted
    assert admission not in w.table.items
    assert not [k for k, item in w.table.items.items() if k[0] == keys.ws(ws) or item.get("workspaceId") == ws]
