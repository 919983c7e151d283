"""ConsolidationRunner over a Temporal client (docs/decisions/0088): a workspace's nightly Schedule and the runs
its owner asks for. The Temporal service answers every call (no worker needed); each is idempotent."""

from __future__ import annotations

import contextlib
from datetime import timedelta

from temporalio.client import (
    Schedule,
    ScheduleActionExecutionStartWorkflow,
    ScheduleActionStartWorkflow,
    ScheduleAlreadyRunningError,
    ScheduleDescription,
    ScheduleOverlapPolicy,
    SchedulePolicy,
    ScheduleSpec,
    ScheduleUpdate,
    ScheduleUpdateInput,
    WorkflowExecutionStatus,
)
from temporalio.common import WorkflowIDConflictPolicy, WorkflowIDReusePolicy
from temporalio.exceptions import WorkflowAlreadyStartedError
from temporalio.service import RPCError, RPCStatusCode

from workspace_memory.adapters.temporal_client import TemporalConnection
from workspace_memory.adapters.temporal_deletions import TemporalDeletions
from workspace_memory.consolidation.contract import (
    NIGHTLY_CRON,
    WORKFLOW_NAME,
    ConsolidationInput,
    RunTrigger,
    consolidation_schedule_id,
    consolidation_workflow_id,
    scheduled_run_id,
)
from workspace_memory.consolidation.control import ScheduleState
from workspace_memory.kernel.clock import iso

CATCHUP_WINDOW = timedelta(hours=1)
"""A night's run missed while the service was down is taken within the hour after, never a day late."""


def nightly(workspace_id: str, task_queue: str) -> Schedule:
    """The workspace's schedule: WORKFLOW_NAME at NIGHTLY_CRON, one at a time (a night's run still going when
    the next is due skips the next). Its action names no run id: each run's workflow id is the schedule's id
    and the time it fired (Temporal appends it), and the workflow takes its own run as the id."""
    return Schedule(
        action=ScheduleActionStartWorkflow(
            WORKFLOW_NAME,
            ConsolidationInput(workspace_id=workspace_id, trigger=RunTrigger.SCHEDULE),
            id=consolidation_schedule_id(workspace_id),
            task_queue=task_queue,
        ),
        spec=ScheduleSpec(cron_expressions=[NIGHTLY_CRON]),
        policy=SchedulePolicy(overlap=ScheduleOverlapPolicy.SKIP, catchup_window=CATCHUP_WINDOW),
    )


def _absent(exc: RPCError) -> bool:
    return exc.status == RPCStatusCode.NOT_FOUND


class TemporalConsolidation(TemporalConnection):
    def ensure_schedule(self, workspace_id: str) -> None:
        self._run(self._ensure(workspace_id))

    async def _ensure(self, workspace_id: str) -> None:
        """Created, or (it exists) made what it should be now: a repeat is harmless, a stale one repaired."""
        client = await self._connect()
        schedule = nightly(workspace_id, self._settings.temporal_task_queue)
        schedule_id = consolidation_schedule_id(workspace_id)
        try:
            await client.create_schedule(schedule_id, schedule)
        except ScheduleAlreadyRunningError:

            def replace(_: ScheduleUpdateInput) -> ScheduleUpdate:
                return ScheduleUpdate(schedule=schedule)

            await client.get_schedule_handle(schedule_id).update(replace)

    def remove_schedule(self, workspace_id: str) -> None:
        self._run(self._remove(workspace_id))

    async def _remove(self, workspace_id: str) -> None:
        client = await self._connect()
        try:
            await client.get_schedule_handle(consolidation_schedule_id(workspace_id)).delete()
        except RPCError as exc:
            if not _absent(exc):
                raise

    def schedule(self, workspace_id: str) -> ScheduleState | None:
        return self._run(self._schedule(workspace_id))

    async def _schedule(self, workspace_id: str) -> ScheduleState | None:
        client = await self._connect()
        try:
            described: ScheduleDescription = await client.get_schedule_handle(
                consolidation_schedule_id(workspace_id)
            ).describe()
        except RPCError as exc:
            if _absent(exc):
                return None
            raise
        info = described.info
        upcoming = info.next_action_times
        running = [
            scheduled_run_id(action.first_execution_run_id)
            for action in info.running_actions
            if isinstance(action, ScheduleActionExecutionStartWorkflow)
        ]
        return ScheduleState(
            next_run_at=iso(upcoming[0].timestamp()) if upcoming else None,
            running_run=running[0] if running else None,
        )

    def start_run(self, run: ConsolidationInput) -> None:
        self._run(self._start_run(run))

    async def _start_run(self, run: ConsolidationInput) -> None:
        """Under the workflow id its run id names: a run started already (running or closed) is not started
        again."""
        client = await self._connect()
        with contextlib.suppress(WorkflowAlreadyStartedError):
            await client.start_workflow(
                WORKFLOW_NAME,
                run,
                id=consolidation_workflow_id(run.workspace_id, str(run.run_id)),
                task_queue=self._settings.temporal_task_queue,
                id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE,
                id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
            )

    def run_open(self, workspace_id: str, run_id: str) -> bool | None:
        return self._run(self._run_open(workspace_id, run_id))

    async def _run_open(self, workspace_id: str, run_id: str) -> bool | None:
        found = await self._described(consolidation_workflow_id(workspace_id, run_id))
        if found is None:
            return None
        return found[0].status == WorkflowExecutionStatus.RUNNING


class TemporalWorkspaceRuns(TemporalConsolidation, TemporalDeletions):
    """The workspaces function's one Temporal connection: its deletion routes and its consolidation routes
    share it (and deleting a workspace removes its schedule through it)."""
