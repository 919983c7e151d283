"""The memory document and its policy (human routes)."""

from __future__ import annotations

from typing import Annotated, Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Body, Header, Query

from workspace_memory.api.http import build_resolver, human_user, json_response, lambda_entry
from workspace_memory.api.schemas import ApplyProposal, CommitOut, SaveDocument, SetPolicy, Undo, VersionOut
from workspace_memory.bootstrap import services
from workspace_memory.document import parse_base_version

app = build_resolver()

BaseVersion = Annotated[str | None, Header(alias="x-base-version")]


@app.get("/v1/workspaces/<ws>/memory/policy")
def get_policy(ws: str) -> Response[str]:
    return json_response(200, services().policy.get(human_user(app), ws).as_dict())


@app.put("/v1/workspaces/<ws>/memory/policy")
def set_policy(ws: str, body: Annotated[SetPolicy, Body()]) -> Response[str]:
    policy = services().policy.set(human_user(app), ws, body.mode, body.expected_revision)
    return json_response(200, policy.as_dict())


@app.get("/v1/workspaces/<ws>/memory")
def read_memory(ws: str) -> Response[str]:
    doc = services().document.read(human_user(app), ws)
    return json_response(
        200,
        {
            "version": doc.version,
            "content": doc.content,
            "bytes": doc.bytes,
            "recallEligible": doc.recall_eligible,
            "updatedAt": doc.updated_at,
            "updatedBy": doc.updated_by,
        },
    )


@app.put("/v1/workspaces/<ws>/memory")
def save_memory(ws: str, body: Annotated[SaveDocument, Body()], base: BaseVersion = None) -> Response[str]:
    commit = services().document.save(human_user(app), ws, body.content, parse_base_version(base))
    return json_response(200, CommitOut.of(commit).model_dump(by_alias=True, exclude_none=True))


@app.post("/v1/workspaces/<ws>/memory/clear")
def clear_memory(ws: str, base: BaseVersion = None) -> Response[str]:
    commit = services().document.clear(human_user(app), ws, parse_base_version(base))
    return json_response(200, CommitOut.of(commit).model_dump(by_alias=True, exclude_none=True))


@app.post("/v1/workspaces/<ws>/memory/undo")
def undo_memory(ws: str, body: Annotated[Undo, Body()], base: BaseVersion = None) -> Response[str]:
    commit = services().document.undo(human_user(app), ws, body.restore_version, parse_base_version(base))
    return json_response(200, CommitOut.of(commit).model_dump(by_alias=True, exclude_none=True))


@app.get("/v1/workspaces/<ws>/memory/versions")
def list_versions(
    ws: str,
    limit: Annotated[int, Query(ge=1, le=100)] = 20,
    cursor: Annotated[str | None, Query(max_length=200)] = None,
) -> Response[str]:
    page = services().document.history(human_user(app), ws, limit, cursor)
    versions = [VersionOut.of(v).model_dump(by_alias=True, exclude_none=True) for v in page.versions]
    return json_response(200, {"versions": versions, "nextCursor": page.next_cursor})


@app.get("/v1/workspaces/<ws>/memory/versions/<number>")
def read_version(ws: str, number: int) -> Response[str]:
    info, content = services().document.read_version(human_user(app), ws, number)
    return json_response(200, {**VersionOut.of(info).model_dump(by_alias=True, exclude_none=True), "content": content})


@app.post("/v1/workspaces/<ws>/memory/proposals/apply")
def apply_proposal(ws: str, body: Annotated[ApplyProposal, Body()], base: BaseVersion = None) -> Response[str]:
    proposal = body.proposal
    commit = services().capture.apply_proposal(
        human_user(app), ws, proposal.edits, proposal.clear_generation, parse_base_version(base)
    )
    return json_response(200, CommitOut.of(commit).model_dump(by_alias=True, exclude_none=True))


handler: Any = lambda_entry(app)
