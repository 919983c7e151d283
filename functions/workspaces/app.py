"""Workspaces, members, workspace AI, key sessions and health."""

from __future__ import annotations

from typing import Annotated, Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Body

from workspace_memory.api.http import build_resolver, human_user, json_response, lambda_entry
from workspace_memory.api.schemas import CreateWorkspace, OpenKeySession, PutMember, SetAi
from workspace_memory.bootstrap import services

app = build_resolver()


@app.get("/v1/health")
def health() -> Response[str]:
    services().table.get("HEALTH", "HEALTH")
    return json_response(200, {"status": "ok"})


@app.post("/v1/workspaces")
def create_workspace(body: Annotated[CreateWorkspace, Body()]) -> Response[str]:
    workspace_id = services().access.create_workspace(human_user(app), body.name, body.share_type)
    return json_response(201, {"workspaceId": workspace_id})


@app.put("/v1/workspaces/<ws>/members/<user_id>")
def put_member(ws: str, user_id: str, body: Annotated[PutMember, Body()]) -> Response[str]:
    services().access.put_member(human_user(app), ws, user_id, body.role)
    return json_response(200, {"userId": user_id, "role": body.role.value})


@app.put("/v1/workspaces/<ws>/ai")
def set_ai(ws: str, body: Annotated[SetAi, Body()]) -> Response[str]:
    workspace = services().access.set_ai(human_user(app), ws, body.enabled)
    return json_response(200, {"enabled": workspace.ai_enabled, "consentRevision": workspace.consent_revision})


@app.post("/v1/workspaces/<ws>/key-sessions")
def open_key_session(ws: str, body: Annotated[OpenKeySession, Body()]) -> Response[str]:
    session = services().key_sessions.open(human_user(app), ws, body.ttl_seconds, body.scopes)
    return json_response(
        201,
        {
            "keySessionId": session.id,
            "expiresAt": session.expires_at_iso,
            "scopes": sorted(scope.value for scope in session.scopes),
        },
    )


@app.delete("/v1/workspaces/<ws>/key-sessions/<session_id>")
def revoke_key_session(ws: str, session_id: str) -> Response[str]:
    services().key_sessions.revoke(human_user(app), ws, session_id)
    return json_response(204)


handler: Any = lambda_entry(app)
