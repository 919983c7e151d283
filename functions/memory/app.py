"""The memory document and its policy (human routes)."""

from __future__ import annotations

from typing import Annotated, Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Body, Header, Query

from workspace_memory.api.http import build_resolver, human_user, lambda_entry, respond
from workspace_memory.api.models.document import (
    CommitOut,
    DocumentOut,
    HistoryOut,
    PurgeOut,
    RetentionOut,
    VersionContentOut,
)
from workspace_memory.api.models.policy import PolicyOut
from workspace_memory.api.schemas import (
    ApplyProposal,
    PurgeLine,
    PutRetention,
    SaveDocument,
    SetPolicy,
    Undo,
    parse_base_version,
)
from workspace_memory.bootstrap import services

app = build_resolver()

BaseVersion = Annotated[str | None, Header(alias="x-base-version")]


@app.get("/v1/workspaces/<ws>/memory/policy")
def get_policy(ws: str) -> Response[PolicyOut]:
    return respond(200, PolicyOut.of(services().policy.get(human_user(app), ws)))


@app.put("/v1/workspaces/<ws>/memory/policy")
def set_policy(ws: str, body: Annotated[SetPolicy, Body()]) -> Response[PolicyOut]:
    policy = services().policy.set(human_user(app), ws, body.mode, body.expected_revision)
    return respond(200, PolicyOut.of(policy))


@app.get("/v1/workspaces/<ws>/memory")
def read_memory(ws: str) -> Response[DocumentOut]:
    return respond(200, DocumentOut.of(services().document.read(human_user(app), ws)))


@app.put("/v1/workspaces/<ws>/memory")
def save_memory(ws: str, body: Annotated[SaveDocument, Body()], base: BaseVersion = None) -> Response[CommitOut]:
    commit = services().document.save(human_user(app), ws, body.content, parse_base_version(base))
    return respond(200, CommitOut.of(commit))


@app.post("/v1/workspaces/<ws>/memory/clear")
def clear_memory(ws: str, base: BaseVersion = None) -> Response[CommitOut]:
    commit = services().document.clear(human_user(app), ws, parse_base_version(base))
    return respond(200, CommitOut.of(commit))


@app.post("/v1/workspaces/<ws>/memory/undo")
def undo_memory(ws: str, body: Annotated[Undo, Body()], base: BaseVersion = None) -> Response[CommitOut]:
    commit = services().document.undo(human_user(app), ws, body.restore_version, parse_base_version(base))
    return respond(200, CommitOut.of(commit))


@app.get("/v1/workspaces/<ws>/memory/versions")
def list_versions(
    ws: str,
    limit: Annotated[int, Query(ge=1, le=100)] = 20,
    cursor: Annotated[str | None, Query(max_length=200)] = None,
) -> Response[HistoryOut]:
    return respond(200, HistoryOut.of(services().document.history(human_user(app), ws, limit, cursor)))


@app.get("/v1/workspaces/<ws>/memory/versions/<number>")
def read_version(ws: str, number: int) -> Response[VersionContentOut]:
    info, content = services().document.read_version(human_user(app), ws, number)
    return respond(200, VersionContentOut.with_content(info, content))


@app.post("/v1/workspaces/<ws>/memory/proposals/apply")
def apply_proposal(ws: str, body: Annotated[ApplyProposal, Body()], base: BaseVersion = None) -> Response[CommitOut]:
    proposal = body.proposal
    commit = services().capture.apply_proposal(
        human_user(app), ws, proposal.edits, proposal.clear_generation, parse_base_version(base)
    )
    return respond(200, CommitOut.of(commit))


@app.post("/v1/workspaces/<ws>/memory/purge")
def purge_line(ws: str, body: Annotated[PurgeLine, Body()]) -> Response[PurgeOut]:
    return respond(200, PurgeOut.of(services().purge.purge(human_user(app), ws, body.line)))


@app.get("/v1/workspaces/<ws>/retention")
def get_retention(ws: str) -> Response[RetentionOut]:
    return respond(200, RetentionOut(history_days=services().retention.get(human_user(app), ws)))


@app.put("/v1/workspaces/<ws>/retention")
def set_retention(ws: str, body: Annotated[PutRetention, Body()]) -> Response[RetentionOut]:
    days = services().retention.set(human_user(app), ws, body.history_days)
    return respond(200, RetentionOut(history_days=days))


handler: Any = lambda_entry(app)
