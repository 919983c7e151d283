"""Workspaces, members, workspace AI, key sessions, deleting a workspace, and health."""

from __future__ import annotations

from typing import Annotated, Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Body, Header, Query

from workspace_memory.api.http import build_resolver, human_user, lambda_entry, no_content, respond
from workspace_memory.api.models.deletion import DeletionOut
from workspace_memory.api.models.workspaces import (
    AiOut,
    HealthOut,
    KeySessionOut,
    KeySessionsOut,
    MemberOut,
    WorkspaceCreated,
    WorkspaceOut,
    WorkspacesOut,
)
from workspace_memory.api.schemas import CreateWorkspace, OpenKeySession, PutMember, SetAi
from workspace_memory.bootstrap import deletion_service, services
from workspace_memory.store.cursors import MAX_PAGE
from workspace_memory.workspaces.access import MAX_WORKSPACES_PAGE

app = build_resolver()


@app.get("/v1/health")
def health() -> Response[HealthOut]:
    services().table.get("HEALTH", "HEALTH")
    return respond(200, HealthOut())


@app.post("/v1/workspaces")
def create_workspace(body: Annotated[CreateWorkspace, Body()]) -> Response[WorkspaceCreated]:
    workspace_id = services().access.create_workspace(human_user(app), body.name, body.share_type)
    return respond(201, WorkspaceCreated(workspace_id=workspace_id))


@app.get("/v1/workspaces")
def list_workspaces(
    limit: Annotated[int, Query(ge=1, le=MAX_WORKSPACES_PAGE)] = MAX_WORKSPACES_PAGE,
    cursor: Annotated[str | None, Query(max_length=200)] = None,
) -> Response[WorkspacesOut]:
    return respond(200, WorkspacesOut.of(services().access.memberships(human_user(app), limit, cursor)))


@app.get("/v1/workspaces/<ws>")
def get_workspace(ws: str) -> Response[WorkspaceOut]:
    return respond(200, WorkspaceOut.of(services().access.view(human_user(app), ws)))


@app.put("/v1/workspaces/<ws>/members/<user_id>")
def put_member(ws: str, user_id: str, body: Annotated[PutMember, Body()]) -> Response[MemberOut]:
    services().access.put_member(human_user(app), ws, user_id, body.role)
    return respond(200, MemberOut(user_id=user_id, role=body.role))


@app.put("/v1/workspaces/<ws>/ai")
def set_ai(ws: str, body: Annotated[SetAi, Body()]) -> Response[AiOut]:
    return respond(200, AiOut.of(services().access.set_ai(human_user(app), ws, body.enabled)))


@app.post("/v1/workspaces/<ws>/key-sessions")
def open_key_session(ws: str, body: Annotated[OpenKeySession, Body()]) -> Response[KeySessionOut]:
    session = services().key_sessions.open(human_user(app), ws, body.ttl_seconds, body.scopes)
    return respond(201, KeySessionOut.of(session))


@app.get("/v1/workspaces/<ws>/key-sessions")
def list_key_sessions(
    ws: str,
    limit: Annotated[int, Query(ge=1, le=MAX_PAGE)] = 20,
    cursor: Annotated[str | None, Query(max_length=200)] = None,
) -> Response[KeySessionsOut]:
    """The caller's own key sessions only, newest first."""
    return respond(200, KeySessionsOut.of(services().key_sessions.list_own(human_user(app), ws, limit, cursor)))


@app.delete("/v1/workspaces/<ws>/key-sessions/<session_id>")
def revoke_key_session(ws: str, session_id: str) -> Response[str]:
    services().key_sessions.revoke(human_user(app), ws, session_id)
    return no_content()


@app.delete("/v1/workspaces/<ws>")
def delete_workspace(
    ws: str, confirmation: Annotated[str | None, Header(alias="x-confirm-workspace")] = None
) -> Response[DeletionOut]:
    """Tombstone, branch key destroyed, purge started: 202 with the deletion's progress (the Temporal client
    is built here, on first use: no other route of this function pays for it)."""
    return respond(202, DeletionOut.of(deletion_service().delete(human_user(app), ws, confirmation)))


@app.get("/v1/workspaces/<ws>/deletion")
def get_deletion(ws: str) -> Response[DeletionOut]:
    return respond(200, DeletionOut.of(deletion_service().progress(human_user(app), ws)))


handler: Any = lambda_entry(app)
