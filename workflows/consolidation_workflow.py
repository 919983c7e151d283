"""Consolidating a workspace (docs/decisions/0086): find the pairs, have the model judge each, propose what it
confirms, record the run. Deterministic, no I/O: the steps are activities (`workflows/consolidation_activities.py`).
The pairs' texts cross only inside activity payloads, which the payload codec seals; the workflow's input, result
and memo hold ids and counts. A worker killed mid-run loses nothing: the next one replays the history, judges only
the pairs not yet judged, and proposing is idempotent (a proposal's id is a function of what it read)."""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from workflows.consolidation_activities import ConsolidationActivities
    from workflows.export_workflow import HEARTBEAT_TIMEOUT, STEP_RETRY, STEP_TIMEOUT
    from workspace_memory.consolidation.contract import (
        WORKFLOW_NAME,
        ConsolidationInput,
        ConsolidationResult,
        Counts,
        FinishInput,
        JudgeInput,
        PairsInput,
        ProposeInput,
        scheduled_run_id,
    )

JUDGE_TIMEOUT = timedelta(seconds=120)
"""One model call: Bedrock's slowest answers stay far inside it."""


@workflow.defn(name=WORKFLOW_NAME)
class WorkspaceConsolidationWorkflow:
    @workflow.run
    async def run(self, job: ConsolidationInput) -> ConsolidationResult:
        run_id = job.run_id or scheduled_run_id(workflow.info().run_id)
        ws = job.workspace_id
        found = await workflow.execute_activity_method(
            ConsolidationActivities.consolidation_pairs,
            PairsInput(workspace_id=ws, run_id=run_id, trigger=job.trigger),
            start_to_close_timeout=STEP_TIMEOUT,
            heartbeat_timeout=HEARTBEAT_TIMEOUT,
            retry_policy=STEP_RETRY,
        )
        verdicts = []
        began = workflow.now()
        for pair in found.pairs:  # one model call each, bounded by the pairs step (MAX_JUDGED_PAIRS)
            if workflow.now() - began > timedelta(seconds=job.judging_seconds):
                break
            verdict = await workflow.execute_activity_method(
                ConsolidationActivities.judge_pair,
                JudgeInput(pair=pair),
                start_to_close_timeout=JUDGE_TIMEOUT,
                retry_policy=STEP_RETRY,
            )
            verdicts.append(verdict)
        proposed = await workflow.execute_activity_method(
            ConsolidationActivities.propose_consolidation,
            ProposeInput(workspace_id=ws, run_id=run_id, verdicts=verdicts),
            start_to_close_timeout=STEP_TIMEOUT,
            heartbeat_timeout=HEARTBEAT_TIMEOUT,
            retry_policy=STEP_RETRY,
        )
        counts = Counts(
            pairs=found.counts.pairs,
            judged=len(verdicts),
            proposed=proposed.proposed,
            already_proposed=proposed.already_proposed,
            stale=proposed.stale,
            left=found.counts.left + len(found.pairs) - len(verdicts),
        )
        await workflow.execute_activity_method(
            ConsolidationActivities.finish_consolidation_run,
            FinishInput(workspace_id=ws, run_id=run_id, counts=counts),
            start_to_close_timeout=STEP_TIMEOUT,
            heartbeat_timeout=HEARTBEAT_TIMEOUT,
            retry_policy=STEP_RETRY,
        )
        return ConsolidationResult(
            run_id=run_id, judged=counts.judged, proposed=counts.proposed, already_proposed=counts.already_proposed
        )
