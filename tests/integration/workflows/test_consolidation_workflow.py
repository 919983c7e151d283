"""The consolidation workflow on a real worker and the real Temporal dev server, its activities mocked by name
(the style of temporalio/samples-python's hello_activity_test): one judging call per pair, only what the judge
confirms sent on to be proposed, the counts the run record gets, and a scheduled run's id taken from Temporal's
run id (the same on every replay)."""

from __future__ import annotations

import asyncio
import re
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import pytest
from temporalio import activity
from temporalio.client import Client
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.worker import Worker

from workflows.consolidation_workflow import WorkspaceConsolidationWorkflow
from workspace_memory.consolidation.contract import (
    ConsolidationInput,
    ConsolidationResult,
    Counts,
    FinishInput,
    JudgedPair,
    JudgeInput,
    PairSide,
    PairsInput,
    PairsResult,
    ProposeInput,
    RunTrigger,
    VerdictResult,
)

pytestmark = pytest.mark.integration


def side(n: int) -> PairSide:
    return PairSide(entry_id=f"en_{n}", revision=1, title=f"t{n}", summary=f"s{n}", body="")


PAIRS = [
    JudgedPair(retired=side(1), kept=side(2), reading="duplicate"),
    JudgedPair(retired=side(3), kept=side(4), reading="conflict"),
    JudgedPair(retired=side(5), kept=side(6), reading="conflict"),
]


class Recorded:
    def __init__(self) -> None:
        self.starts: list[PairsInput] = []
        self.judged: list[str] = []
        self.proposed: list[ProposeInput] = []
        self.finished: list[FinishInput] = []


def mocked(seen: Recorded, verdicts: dict[str, str]) -> list[Callable[..., object]]:
    @activity.defn(name="consolidation_pairs")
    def consolidation_pairs(data: PairsInput) -> PairsResult:
        seen.starts.append(data)
        return PairsResult(pairs=PAIRS, counts=Counts(pairs=4, left=1))

    @activity.defn(name="judge_pair")
    def judge_pair(data: JudgeInput) -> VerdictResult:
        seen.judged.append(data.pair.retired.entry_id)
        retired, kept = data.pair.retired, data.pair.kept
        relation = verdicts[retired.entry_id]
        return VerdictResult(
            retired_id=retired.entry_id, retired_revision=1, kept_id=kept.entry_id, kept_revision=1, relation=relation
        )

    @activity.defn(name="propose_consolidation")
    def propose_consolidation(data: ProposeInput) -> Counts:
        seen.proposed.append(data)
        return Counts(proposed=len([v for v in data.verdicts if v.relation != "unrelated"]) - 1, already_proposed=1)

    @activity.defn(name="finish_consolidation_run")
    def finish_consolidation_run(data: FinishInput) -> Counts:
        seen.finished.append(data)
        return data.counts

    return [consolidation_pairs, judge_pair, propose_consolidation, finish_consolidation_run]


async def run(address: str, job: ConsolidationInput, activities: list[Callable[..., object]]) -> ConsolidationResult:
    client = await Client.connect(address, data_converter=pydantic_data_converter)
    queue = f"q-consolidation-{uuid.uuid4().hex[:8]}"
    with ThreadPoolExecutor(4) as executor:
        async with Worker(
            client,
            task_queue=queue,
            workflows=[WorkspaceConsolidationWorkflow],
            activities=activities,
            activity_executor=executor,
        ):
            return await client.execute_workflow(
                WorkspaceConsolidationWorkflow.run, job, id=f"consolidation-{uuid.uuid4().hex}", task_queue=queue
            )


def test_each_pair_is_judged_once_and_only_what_the_judge_confirms_goes_on(temporal_address: str) -> None:
    seen = Recorded()
    job = ConsolidationInput(workspace_id="ws_1", run_id="cr_" + "a" * 24, trigger=RunTrigger.OWNER)
    verdicts = {"en_1": "duplicate", "en_3": "unrelated", "en_5": "conflict"}
    done = asyncio.run(run(temporal_address, job, mocked(seen, verdicts)))
    assert seen.judged == ["en_1", "en_3", "en_5"]
    (proposed,) = seen.proposed
    assert [(v.retired_id, v.relation) for v in proposed.verdicts] == [
        ("en_1", "duplicate"),
        ("en_3", "unrelated"),
        ("en_5", "conflict"),
    ]
    (finished,) = seen.finished
    assert finished.counts == Counts(pairs=4, judged=3, proposed=1, already_proposed=1, stale=0, left=1)
    assert (done.run_id, done.judged, done.proposed, done.already_proposed) == (job.run_id, 3, 1, 1)


def test_a_scheduled_run_takes_its_id_from_the_workflow_run(temporal_address: str) -> None:
    seen = Recorded()
    job = ConsolidationInput(workspace_id="ws_1")
    done = asyncio.run(
        run(temporal_address, job, mocked(seen, {"en_1": "unrelated", "en_3": "unrelated", "en_5": "unrelated"}))
    )
    (start,) = seen.starts
    assert start.trigger is RunTrigger.SCHEDULE
    assert start.run_id == done.run_id
    assert re.fullmatch(r"cr_[0-9a-f]{32}", done.run_id)


def test_a_run_past_its_judging_time_leaves_the_other_pairs_for_the_next(temporal_address: str) -> None:
    seen = Recorded()
    job = ConsolidationInput(workspace_id="ws_1", run_id="cr_" + "c" * 24, judging_seconds=0)
    verdicts = {"en_1": "duplicate", "en_3": "conflict", "en_5": "conflict"}
    asyncio.run(run(temporal_address, job, mocked(seen, verdicts)))
    assert seen.judged == ["en_1"]  # the budget is judged between calls: the first always runs
    (finished,) = seen.finished
    assert (finished.counts.judged, finished.counts.left) == (1, 1 + 2)
