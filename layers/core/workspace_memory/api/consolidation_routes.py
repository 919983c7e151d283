"""Consolidation's routes (docs/decisions/0086), registered on the entries function's resolver (its steps read the
search index, which that function holds warm); kept here, beside the API's models, so the function stays short:
the owner's run records, and the consolidation workflow's steps (IAM). A step answers ids, counts and, for the
pairs to judge, the texts the judge reads (the worker's payload codec seals them in the workflow's history)."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver, Response
from aws_lambda_powertools.event_handler.openapi.params import Body

from workspace_memory.api.http import automation_caller, human_user, respond
from workspace_memory.api.models.consolidation import PairOut, PairsOut, RunCountsOut, RunOut, RunsOut
from workspace_memory.api.schemas.consolidation import CountsIn, ProposeStep, StartStep
from workspace_memory.bootstrap import consolidation_service
from workspace_memory.kernel.ids import require_identifier


def register(app: APIGatewayHttpResolver) -> None:
    @app.get(
        "/v1/workspaces/<ws>/consolidation/runs",
        summary="See the workspace's consolidation runs",
        description=(
            "The owner's view of consolidation runs, newest first: what started each (`schedule` or `owner`), when "
            "it started and finished, and how many pairs it found, judged and proposed (ids and counts only; the "
            "proposals themselves wait in the review inbox). Anyone else: 403."
        ),
    )
    def list_consolidation_runs(ws: str) -> Response[RunsOut]:
        runs = consolidation_service().runs(human_user(app), ws)
        return respond(200, RunsOut(runs=[RunOut.of(run) for run in runs]))

    @app.post(
        "/v1/automation/workspaces/<ws>/consolidation/runs/<run_id>/pairs",
        summary="Find the pairs a consolidation run judges",
        description=(
            "The consolidation workflow's first step (IAM): records the run as started (once) and answers the "
            "pairs of current entries of one scope, owner and type that look like the same statement or two "
            "claims about one subject, none an earlier proposal names, at most 50 (the rest are counted `left`)."
        ),
    )
    def consolidation_pairs(ws: str, run_id: str, body: Annotated[StartStep, Body()]) -> Response[PairsOut]:
        automation_caller(app)
        found = consolidation_service().pairs(ws, require_identifier(run_id, "runId"), body.trigger)
        return respond(200, PairsOut(pairs=[PairOut.of(p) for p in found.pairs], counts=RunCountsOut.of(found.counts)))

    @app.post(
        "/v1/automation/workspaces/<ws>/consolidation/runs/<run_id>/proposals",
        summary="Propose what a consolidation run's judge confirmed",
        description=(
            "The consolidation workflow's step (IAM): a review-inbox candidate per verdict of `duplicate` (kind "
            "`merge`) or `conflict` (kind `supersede`), iff both chains are still at the revisions judged; the "
            "older is the one a person's acceptance would retire. Repeatable: a proposal made before is counted "
            "`alreadyProposed`, never made twice."
        ),
    )
    def propose_consolidation(ws: str, run_id: str, body: Annotated[ProposeStep, Body()]) -> Response[RunCountsOut]:
        from workspace_memory.consolidation.service import Verdict

        automation_caller(app)
        verdicts = [
            Verdict(v.retired_id, v.retired_revision, v.kept_id, v.kept_revision, v.relation) for v in body.verdicts
        ]
        counts = consolidation_service().propose(ws, require_identifier(run_id, "runId"), verdicts)
        return respond(200, RunCountsOut.of(counts))

    @app.post(
        "/v1/automation/workspaces/<ws>/consolidation/runs/<run_id>/finish",
        summary="Finish a consolidation run with its counts",
        description="The consolidation workflow's last step (IAM): the run's record, done. Repeatable.",
    )
    def finish_consolidation(ws: str, run_id: str, body: Annotated[CountsIn, Body()]) -> Response[RunOut]:
        from workspace_memory.store.consolidation_runs import RunCounts

        automation_caller(app)
        counts = RunCounts(**body.model_dump())
        return respond(200, RunOut.of(consolidation_service().finish(ws, require_identifier(run_id, "runId"), counts)))
