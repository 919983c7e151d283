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


JUDGING_SECONDS = 1800
"""A run stops putting pairs to the model this long after it began judging (workflow time, deterministic on
replay): the pairs not judged are counted `left`, for the next run. A run is bounded in time as in model calls."""


def consolidation_workflow_id(workspace_id: str, run_id: str) -> str:
    return f"workspace-consolidation-{workspace_id}-{run_id}"


def scheduled_run_id(temporal_run_id: str) -> str:
    """A scheduled run's id, from its first Temporal run id (a UUID; the same on every replay): `cr_` and 32 hex
    digits. The workflow records the run under it, and the on-demand route answers it for a run going."""
    return "cr_" + temporal_run_id.replace("-", "")[:32]


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
    judging_seconds: int = JUDGING_SECONDS


class ConsolidationResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    run_id: str
    judged: int
    proposed: int
    already_proposed: int


class Counts(BaseModel):
    """A run's counts, as its record keeps them (`store/consolidation_runs.RunCounts`)."""

    model_config = ConfigDict(frozen=True)

    pairs: int = 0
    judged: int = 0
    proposed: int = 0
    already_proposed: int = 0
    stale: int = 0
    left: int = 0


class PairSide(BaseModel):
    """One entry of a pair, as the judge reads it: memory text, so it crosses only inside activity payloads."""

    model_config = ConfigDict(frozen=True)

    entry_id: str
    revision: int
    title: str
    summary: str
    body: str


class JudgedPair(BaseModel):
    model_config = ConfigDict(frozen=True)

    retired: PairSide
    kept: PairSide
    reading: str
    """What the similarity rule reads: `duplicate` or `conflict`."""


class PairsInput(BaseModel):
    model_config = ConfigDict(frozen=True)

    workspace_id: str
    run_id: str
    trigger: RunTrigger


class PairsResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    pairs: list[JudgedPair]
    counts: Counts


class JudgeInput(BaseModel):
    model_config = ConfigDict(frozen=True)

    pair: JudgedPair


class VerdictResult(BaseModel):
    """The judge's word on one pair: `duplicate`, `conflict` or `unrelated`, and the ids it is about."""

    model_config = ConfigDict(frozen=True)

    retired_id: str
    retired_revision: int
    kept_id: str
    kept_revision: int
    relation: str


class ProposeInput(BaseModel):
    model_config = ConfigDict(frozen=True)

    workspace_id: str
    run_id: str
    verdicts: list[VerdictResult]


class FinishInput(BaseModel):
    model_config = ConfigDict(frozen=True)

    workspace_id: str
    run_id: str
    counts: Counts
