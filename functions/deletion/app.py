"""The purge of deleted workspaces and the erasure of members (IAM): the deletion and erasure workflows' only
way to the table and the key store.

This function's role is the only one that may delete items; both routes refuse a workspace that is not
tombstoned (409 `WORKSPACE_NOT_DELETED`), so nothing here can purge a live workspace.
"""

from __future__ import annotations

from typing import Annotated, Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Body

from workspace_memory.api.http import automation_caller, build_resolver, lambda_entry, respond
from workspace_memory.api.models.deletion import BranchKeyDestroyedOut, PurgeBatchOut
from workspace_memory.api.models.erasure import ErasureStepOut
from workspace_memory.api.schemas.deletion import ErasureStep, PurgeBatch
from workspace_memory.bootstrap import erasure_steps, services

app = build_resolver()


@app.post(
    "/v1/automation/workspaces/<ws>/deletion/branch-key",
    summary="Destroy a deleted workspace's branch key",
    description=(
        "The deletion workflow's step (IAM): destroys the branch key of a workspace already tombstoned, so nothing "
        "of it can be decrypted again; answers how many key items went. Repeatable; a workspace not deleted is "
        "refused (409 `WORKSPACE_NOT_DELETED`)."
    ),
)
def destroy_branch_key(ws: str) -> Response[BranchKeyDestroyedOut]:
    automation_caller(app)
    return respond(200, BranchKeyDestroyedOut(items_deleted=services().workspace_purge.destroy_branch_key(ws)))


@app.post(
    "/v1/automation/workspaces/<ws>/deletion/batches",
    summary="Purge a batch of a deleted workspace's items",
    description=(
        "The deletion workflow's step (IAM): deletes up to `limit` items of a tombstoned workspace and says "
        "whether more remain; its record goes last. A workspace not deleted is refused (409 "
        "`WORKSPACE_NOT_DELETED`)."
    ),
)
def purge_batch(ws: str, body: Annotated[PurgeBatch, Body()]) -> Response[PurgeBatchOut]:
    automation_caller(app)
    batch = services().workspace_purge.purge_batch(ws, body.limit, body.cleared)
    return respond(200, PurgeBatchOut(deleted=batch.deleted, more=batch.more, turns=batch.turns))


@app.post(
    "/v1/automation/workspaces/<ws>/erasures/<erasure_id>/steps",
    summary="Run one step of a member's erasure",
    description=(
        "The erasure workflow's step (IAM): one batch of the given phase, deleted, pseudonymized and counted in "
        "one transaction; says whether the phase goes on and from where. Repeatable: a batch that landed is not "
        "done or counted twice. An unknown erasure is refused (404 `ERASURE_NOT_FOUND`)."
    ),
)
def erasure_step(ws: str, erasure_id: str, body: Annotated[ErasureStep, Body()]) -> Response[ErasureStepOut]:
    automation_caller(app)
    step = erasure_steps().step(ws, erasure_id, body.phase, body.after)
    return respond(200, ErasureStepOut(more=step.more, after=step.after, turns=step.turns))


handler: Any = lambda_entry(app)
