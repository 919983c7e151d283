"""The owner's control of consolidation (docs/decisions/0088), judged on the in-memory table with a runner that
keeps schedules and runs in dicts: off by default, the schedule following the stored setting, owner only with
nothing changed on a refusal, a schedule call that fails, and one run at a time."""

from __future__ import annotations

import contextlib
import copy
from dataclasses import dataclass, field

import pytest

from tests.unit.turns.test_services import EDITOR, OWNER, VIEWER, World
from workspace_memory.consolidation.contract import ConsolidationInput, RunTrigger
from workspace_memory.consolidation.control import STARTING_GRACE_SECONDS, ConsolidationControl, ScheduleState
from workspace_memory.kernel.errors import Forbidden, StaleRevision, Unavailable, WorkspaceNotFound
from workspace_memory.store import keys
from workspace_memory.store.audit_trail import AuditedTable
from workspace_memory.store.workspace_records import Workspace
from workspace_memory.workspaces.deletion import DeletionService

pytestmark = pytest.mark.unit


@dataclass
class FakeRunner:
    schedules: set[str] = field(default_factory=set)
    runs: dict[str, ConsolidationInput] = field(default_factory=dict)
    closed: set[str] = field(default_factory=set)
    scheduled_running: dict[str, str] = field(default_factory=dict)
    down: bool = False
    calls: int = 0

    def _call(self) -> None:
        self.calls += 1
        if self.down:
            raise Unavailable("workflow service unavailable (RPCError)", transient=True)

    def ensure_schedule(self, workspace_id: str) -> None:
        self._call()
        self.schedules.add(workspace_id)

    def remove_schedule(self, workspace_id: str) -> None:
        self._call()
        self.schedules.discard(workspace_id)

    def schedule(self, workspace_id: str) -> ScheduleState | None:
        self._call()
        if workspace_id not in self.schedules:
            return None
        return ScheduleState("2027-01-01T03:17:00Z", self.scheduled_running.get(workspace_id))

    def start_run(self, run: ConsolidationInput) -> None:
        self._call()
        self.runs.setdefault(str(run.run_id), run)

    def run_open(self, workspace_id: str, run_id: str) -> bool | None:
        self._call()
        return None if run_id not in self.runs else run_id not in self.closed

    # the deletion runner's half
    def start(self, deletion: object) -> None:
        pass

    def progress(self, workspace_id: str) -> None:
        return None


def world() -> tuple[World, ConsolidationControl, FakeRunner, str]:
    w = World()
    ws = w.workspace()
    runner = FakeRunner()
    return w, ConsolidationControl(AuditedTable(w.table, w.clock), w.clock, runner), runner, ws


def test_a_workspace_is_not_consolidated_until_its_owner_opts_in() -> None:
    _, control, runner, ws = world()
    view = control.view(OWNER, ws)
    assert (view.settings.enabled, view.settings.auto_file, view.settings.revision) == (False, False, 0)
    assert (view.scheduled, view.next_run_at, runner.schedules) == (False, None, set())


def test_opting_in_makes_the_schedule_and_opting_out_removes_it() -> None:
    w, control, runner, ws = world()
    on = control.set(OWNER, ws, True, None, 0)
    assert (on.settings.enabled, on.settings.revision, on.scheduled, runner.schedules) == (True, 1, True, {ws})
    again = control.set(OWNER, ws, True, True, 1)  # a repeat keeps the schedule; autoFile is only stored
    assert (again.settings.auto_file, again.settings.revision, runner.schedules) == (True, 2, {ws})
    off = control.set(OWNER, ws, False, None, 2)
    assert (off.settings.enabled, off.settings.auto_file, off.scheduled, runner.schedules) == (
        False,
        True,
        False,
        set(),
    )
    assert control.set(OWNER, ws, False, None, 3).scheduled is False  # opting out twice is fine
    item = w.table.items[keys.consolidation(ws)]
    assert (item["enabled"], item["autoFile"], item["revision"], item["updatedBy"]) == (False, True, 4, OWNER)


def test_each_write_of_the_settings_is_an_audited_opt_in_or_out() -> None:
    w, control, _, ws = world()
    control.set(OWNER, ws, True, None, 0)
    control.set(OWNER, ws, False, None, 1)
    events = [
        i for k, i in w.table.items.items() if k[1].startswith(keys.AUDIT_PREFIX) and i["kind"] == "consolidation"
    ]
    assert sorted((e["op"], e["actor"], e["targets"][0]["version"]) for e in events) == [
        ("opted-in", OWNER, 1),
        ("opted-out", OWNER, 2),
    ]


@pytest.mark.parametrize(("user", "error"), [(EDITOR, Forbidden), (VIEWER, Forbidden), ("stranger", WorkspaceNotFound)])
def test_only_the_owner_reads_or_writes_them_and_a_refusal_changes_nothing(user: str, error: type[Exception]) -> None:
    w, control, runner, ws = world()
    before = copy.deepcopy(w.table.items)
    for attempt in (
        lambda: control.view(user, ws),
        lambda: control.set(user, ws, True, True, 0),
        lambda: control.start_run(user, ws),
    ):
        with pytest.raises(error):
            attempt()
    assert (w.table.items, runner.calls) == (before, 0)


def test_a_stale_revision_is_refused_naming_the_current_one() -> None:
    w, control, runner, ws = world()
    control.set(OWNER, ws, True, None, 0)
    before = copy.deepcopy(w.table.items)
    with pytest.raises(StaleRevision) as refused:
        control.set(OWNER, ws, False, None, 0)
    assert refused.value.details["current_revision"] == 1
    assert (w.table.items, runner.schedules) == (before, {ws})


def test_a_schedule_call_that_fails_leaves_the_setting_and_the_next_put_repairs_it() -> None:
    w, control, runner, ws = world()
    runner.down = True
    with pytest.raises(Unavailable) as failed:
        control.set(OWNER, ws, True, None, 0)
    assert failed.value.details["current_revision"] == 1  # the setting was stored: send it again on revision 1
    assert (w.table.items[keys.consolidation(ws)]["enabled"], runner.schedules) == (True, set())
    runner.down = False
    assert control.view(OWNER, ws).scheduled is False  # read from the schedule, not from the setting
    assert control.set(OWNER, ws, True, None, 1).scheduled is True


def test_an_opt_in_that_raced_the_deletion_removes_its_own_schedule() -> None:
    w, _, runner, ws = world()
    deletion = DeletionService(w.table, w.key_store, w.clock, runner, schedules=runner)

    class DeletedMeanwhile(FakeRunner):
        def ensure_schedule(self, workspace_id: str) -> None:
            super().ensure_schedule(workspace_id)
            with contextlib.suppress(WorkspaceNotFound):  # its progress: this fake runs no deletion workflow
                deletion.delete(OWNER, ws, ws)  # the tombstone lands, and its request's removal, before ours ends
            assert Workspace.from_item(w.table.items[keys.meta(ws)]).deleted
            self.schedules.add(workspace_id)  # as if the removal came before this schedule was made

    racing = DeletedMeanwhile()
    with pytest.raises(WorkspaceNotFound):
        ConsolidationControl(w.table, w.clock, racing).set(OWNER, ws, True, None, 0)
    assert racing.schedules == set()


def test_a_run_on_demand_starts_once_and_a_second_ask_answers_the_run_going() -> None:
    w, control, runner, ws = world()
    first = control.start_run(OWNER, ws)
    assert (first.trigger, first.started) == (RunTrigger.OWNER, True)
    assert runner.runs[first.run_id] == ConsolidationInput(
        workspace_id=ws, run_id=first.run_id, trigger=RunTrigger.OWNER
    )
    again = control.start_run(OWNER, ws)
    assert (again.run_id, again.started, len(runner.runs)) == (first.run_id, False, 1)
    runner.closed.add(first.run_id)
    after = control.start_run(OWNER, ws)
    assert (after.started, len(runner.runs)) == (True, 2)
    assert after.run_id != first.run_id
    assert w.table.items[keys.consolidation_latest_run(ws)]["runId"] == after.run_id


def test_a_run_claimed_but_never_started_is_started_by_the_next_ask() -> None:
    w, control, runner, ws = world()
    first = control.start_run(OWNER, ws)
    del runner.runs[first.run_id]  # the claiming request died before the workflow service heard of it
    again = control.start_run(OWNER, ws)
    assert (again.run_id, again.started, list(runner.runs)) == (first.run_id, False, [first.run_id])
    del runner.runs[first.run_id]
    w.clock.advance(STARTING_GRACE_SECONDS + 1)  # long after: its history is gone, it ran; a new run starts
    later = control.start_run(OWNER, ws)
    assert later.started
    assert later.run_id != first.run_id


def test_a_scheduled_run_going_is_the_answer_to_an_ask() -> None:
    w, control, runner, ws = world()
    control.set(OWNER, ws, True, None, 0)
    runner.scheduled_running[ws] = "run-of-tonight"
    before = copy.deepcopy(w.table.items)
    answer = control.start_run(OWNER, ws)
    assert (answer.run_id, answer.trigger, answer.started, runner.runs) == ("run-of-tonight", "schedule", False, {})
    assert w.table.items == before


def test_each_run_asked_for_is_audited_once() -> None:
    w, control, runner, ws = world()
    first = control.start_run(OWNER, ws)
    control.start_run(OWNER, ws)  # answered with the same run: nothing written, nothing audited
    runner.closed.add(first.run_id)
    second = control.start_run(OWNER, ws)
    events = [
        i for k, i in w.table.items.items() if k[1].startswith(keys.AUDIT_PREFIX) and i["kind"] == "consolidation-run"
    ]
    assert sorted((e["op"], e["actor"], e["targets"][0]["id"]) for e in events) == sorted(
        [("requested", OWNER, first.run_id), ("requested", OWNER, second.run_id)]
    )
