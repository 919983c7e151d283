"""The contract between the consolidation routes and the consolidation workflow (docs/decisions/0086): plain
pydantic models, no I/O, so the worker's sandbox can import it. Ids, revisions, counts and rule names cross it;
the texts a judging step reads cross it only inside activity payloads, which the payload codec encrypts (as a
turn's recall does), never in the workflow's own inputs, memo or result."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict

WORKFLOW_NAME = "WorkspaceConsolidationWorkflow"
NIGHTLY_CRON = "17 3 * * *"
"""When a workspace that opted in is consolidated by default: once a night, 03:17 UTC (off the hour, where
every other nightly job lands)."""
MAX_JUDGED_PAIRS = 50
"""The most pairs one run asks the model to judge: a run is bounded in model calls whatever the workspace's
size; the pairs left over are judged by the next run (the run record says how many were left)."""


def consolidation_workflow_id(workspace_id: str, run_id: str) -> str:
    return f"workspace-consolidation-{workspace_id}-{run_id}"


def consolidation_schedule_id(workspace_id: str) -> str:
    return f"workspace-consolidation-{workspace_id}"


class RunTrigger(StrEnum):
    SCHEDULE = "schedule"
    OWNER = "owner"


class ConsolidationInput(BaseModel):
    """Server-set when a run is asked for (by the owner, or by the workspace's schedule, whose action names no
    run id: the workflow then takes its own workflow id's run as the id)."""

    model_config = ConfigDict(frozen=True)

    workspace_id: str
    run_id: str | None = None
    trigger: RunTrigger = RunTrigger.SCHEDULE


class ConsolidationResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    run_id: str
    judged: int
    proposed: int
    already_proposed: int
