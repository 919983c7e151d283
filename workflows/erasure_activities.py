"""The erasure's step activity, through the automation API's erasure route (the worker never touches the
table). Idempotent, so Temporal may retry it freely. Its turns' histories are deleted by
`workflows/history_activities.py`."""

from __future__ import annotations

from temporalio import activity

from workflows.automation import ErasureApi
from workflows.deletion_activities import body_of
from workspace_memory.workspaces.erasure_contract import StepInput, StepResult


class ErasureActivities:
    def __init__(self, api: ErasureApi) -> None:
        self._api = api

    @activity.defn(name="erasure_step")
    def erasure_step(self, data: StepInput) -> StepResult:
        activity.heartbeat(data.phase.value)
        step = body_of(self._api.erasure_step(data))
        return StepResult(more=step.more, after=step.after, turns=step.turns)
