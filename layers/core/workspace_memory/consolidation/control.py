"""The owner's control of consolidation (docs/decisions/0088): the opt-in, its nightly Temporal Schedule, and a
run started on demand.

The settings live in the workspace's `CONSOLIDATION` item (off by default), written by compare-and-set on its
revision. The item is the truth; the schedule follows it: a PUT writes the item first, then creates (or keeps)
or deletes the schedule, so a schedule call that fails leaves the setting stored and the PUT answering 503 with
the new revision, and the next PUT repairs the schedule. A read reports `scheduled` from the schedule's real
presence, never from the setting.

One run at a time per workspace: an on-demand start answers a run still going (the schedule's, or the last one
the owner asked for, whose id the `CONSOLIDATIONRUN` item holds) instead of starting another; a new run is
claimed by compare-and-set on that item, then started under the workflow id its run id names, so a request
that lost the race, or one that follows a request that crashed before starting, starts that same workflow
(idempotently) rather than a second one."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from workspace_memory.consolidation.contract import NIGHTLY_CRON, ConsolidationInput, RunTrigger
from workspace_memory.kernel.clock import Clock, iso
from workspace_memory.kernel.errors import Conflict, Forbidden, StaleRevision, Unavailable, WorkspaceNotFound
from workspace_memory.kernel.ids import new_id
from workspace_memory.store import keys
from workspace_memory.store.changes import Label, ReplaceRevision, WorkspaceLive
from workspace_memory.store.consolidation_records import ConsolidationSettings, OwnerRun
from workspace_memory.store.ports import Table, TransactionCancelled
from workspace_memory.store.workspace_records import Workspace
from workspace_memory.workspaces.access import Caller, load_caller

STARTING_GRACE_SECONDS = 300
"""How long after it was claimed a run the workflow service does not know is taken for one still being started
(the request that claimed it starts it within seconds): past that, its workflow ran and its history is gone."""


@dataclass(frozen=True)
class ScheduleState:
    """What the workflow service says of a workspace's schedule."""

    next_run_at: str | None
    running_run: str | None
    """The run id of a scheduled run still going (its workflow's first run id), if any."""


class ScheduleRemover(Protocol):
    """What deleting a workspace needs of the schedule: its removal, idempotent."""

    def remove_schedule(self, workspace_id: str) -> None: ...


class ConsolidationRunner(ScheduleRemover, Protocol):
    """Where schedules and runs live (Temporal): every call idempotent."""

    def ensure_schedule(self, workspace_id: str) -> None: ...

    def schedule(self, workspace_id: str) -> ScheduleState | None: ...

    def start_run(self, run: ConsolidationInput) -> None: ...

    def run_open(self, workspace_id: str, run_id: str) -> bool | None:
        """True while the run's workflow runs, False once it closed, None when the service has no such run."""
        ...


@dataclass(frozen=True)
class ConsolidationView:
    settings: ConsolidationSettings
    cron: str
    scheduled: bool
    next_run_at: str | None


@dataclass(frozen=True)
class RunAnswer:
    run_id: str
    trigger: RunTrigger
    started: bool
    """False: a run was going already, and this is it."""


class ConsolidationControl:
    def __init__(self, table: Table, clock: Clock, runner: ConsolidationRunner) -> None:
        self._table = table
        self._clock = clock
        self._runner = runner

    def view(self, user_id: str, workspace_id: str) -> ConsolidationView:
        """Owner only: the settings say what the owner decided, and the schedule what the workspace will get."""
        caller, (item,) = load_caller(self._table, workspace_id, user_id, [keys.consolidation(workspace_id)])
        caller.require_owner()
        return self._view(workspace_id, ConsolidationSettings.of(item))

    def set(
        self, user_id: str, workspace_id: str, enabled: bool, auto_file: bool | None, expected_revision: int
    ) -> ConsolidationView:
        """The owner opts in or out (`auto_file` None: kept), by compare-and-set on the revision; every write
        bumps it and is audited, even to the same value, and brings the schedule in line with it."""
        caller, (item,) = load_caller(self._table, workspace_id, user_id, [keys.consolidation(workspace_id)])
        caller.require_owner()
        current = ConsolidationSettings.of(item)
        if current.revision != expected_revision:
            raise StaleRevision("consolidation settings revision is stale", current_revision=current.revision)
        updated = ConsolidationSettings(
            enabled=enabled,
            auto_file=current.auto_file if auto_file is None else auto_file,
            revision=expected_revision + 1,
            updated_at=iso(self._clock.now()),
            updated_by=user_id,
        )
        key = keys.consolidation(workspace_id)
        try:
            self._claim(caller, ReplaceRevision(updated.to_item(workspace_id), expected_revision, Label.CONSOLIDATION))
        except TransactionCancelled as exc:
            latest = ConsolidationSettings.of(exc.seen(key)) if exc.saw(key) else current
            raise StaleRevision("consolidation settings revision is stale", current_revision=latest.revision) from None
        self._follow(workspace_id, updated)
        return self._view(workspace_id, updated)

    def start_run(self, user_id: str, workspace_id: str) -> RunAnswer:
        """The owner asks for a run now, whether or not the schedule is on; one still going is the answer."""
        caller, (item,) = load_caller(self._table, workspace_id, user_id, [keys.consolidation_latest_run(workspace_id)])
        caller.require_owner()
        state = self._runner.schedule(workspace_id)
        if state is not None and state.running_run is not None:
            return RunAnswer(state.running_run, RunTrigger.SCHEDULE, started=False)
        last = OwnerRun.of(item)
        if last is not None and self._going(workspace_id, last):
            return RunAnswer(last.run_id, RunTrigger.OWNER, started=False)
        seen = 0 if last is None else last.revision
        run = OwnerRun(new_id("cr"), user_id, iso(self._clock.now()), seen + 1)
        key = keys.consolidation_latest_run(workspace_id)
        try:
            self._claim(caller, ReplaceRevision(run.to_item(workspace_id), seen, Label.CONSOLIDATION_RUN))
        except TransactionCancelled as exc:
            winner = OwnerRun.of(exc.seen(key)) if exc.saw(key) else None
            if winner is None:
                raise Conflict("another run was asked for concurrently; ask again") from None
            self._runner.start_run(_input(workspace_id, winner))
            return RunAnswer(winner.run_id, RunTrigger.OWNER, started=False)
        self._runner.start_run(_input(workspace_id, run))
        return RunAnswer(run.run_id, RunTrigger.OWNER, started=True)

    def _claim(self, caller: Caller, write: ReplaceRevision) -> None:
        """`write` iff the caller is still the owner of a live workspace; TransactionCancelled: its revision moved."""
        workspace_id = caller.workspace.id
        try:
            self._table.transact([write, caller.still_owner(), WorkspaceLive(workspace_id)])
        except TransactionCancelled as exc:
            if Label.ACCESS in exc.failed():
                raise Forbidden("only the workspace owner may do this") from None
            if Label.WORKSPACE in exc.failed():
                raise WorkspaceNotFound("workspace not found") from None
            raise

    def _going(self, workspace_id: str, run: OwnerRun) -> bool:
        """Whether the owner's last run is still going; one the service does not know yet, claimed moments ago,
        is started here (its claimer may have failed before starting it) and counts as going."""
        state = self._runner.run_open(workspace_id, run.run_id)
        if state is not None:
            return state
        if self._clock.now() - datetime.fromisoformat(run.requested_at).timestamp() > STARTING_GRACE_SECONDS:
            return False
        self._runner.start_run(_input(workspace_id, run))
        return True

    def _follow(self, workspace_id: str, settings: ConsolidationSettings) -> None:
        """The schedule made to follow the stored setting. An opt-in that raced the workspace's deletion (whose
        request removes the schedule after its tombstone) removes the schedule it just made."""
        try:
            if not settings.enabled:
                self._runner.remove_schedule(workspace_id)
                return
            self._runner.ensure_schedule(workspace_id)
            meta = Workspace.of(self._table.get(*keys.meta(workspace_id)))
            if meta is None or meta.deleted:
                self._runner.remove_schedule(workspace_id)
                raise WorkspaceNotFound("workspace not found")
        except Unavailable:
            raise Unavailable(
                "the setting was stored but its schedule could not be changed; send it again to repair it",
                transient=True,
                current_revision=settings.revision,
            ) from None

    def _view(self, workspace_id: str, settings: ConsolidationSettings) -> ConsolidationView:
        state = self._runner.schedule(workspace_id)
        next_run = None if state is None else state.next_run_at
        return ConsolidationView(settings, NIGHTLY_CRON, scheduled=state is not None, next_run_at=next_run)


def _input(workspace_id: str, run: OwnerRun) -> ConsolidationInput:
    return ConsolidationInput(workspace_id=workspace_id, run_id=run.run_id, trigger=RunTrigger.OWNER)
