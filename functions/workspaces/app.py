"""Workspaces, members, erasing a member, workspace AI, consolidation's schedule and runs, key sessions, deleting
a workspace, the audit trail, and health."""

from __future__ import annotations

from typing import Annotated, Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Body, Header, Query

from workspace_memory.api.http import build_resolver, human_user, lambda_entry, no_content, respond
from workspace_memory.api.models.audit import AuditOut
from workspace_memory.api.models.consolidation_settings import ConsolidationOut, ConsolidationRunOut
from workspace_memory.api.models.deletion import DeletionOut
from workspace_memory.api.models.erasure import ErasureOut
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
from workspace_memory.api.schemas.params import parse_time
from workspace_memory.api.schemas.workspaces import CreateWorkspace, OpenKeySession, PutMember, SetAi, SetConsolidation
from workspace_memory.bootstrap import consolidation_control, deletion_service, erasure_service, services
from workspace_memory.governance.audit_query import DEFAULT_AUDIT_PAGE, MAX_AUDIT_PAGE, AuditQuery
from workspace_memory.kernel.terms import AuditKind
from workspace_memory.store.cursors import MAX_PAGE, MAX_WORKSPACES_PAGE

app = build_resolver()


@app.get(
    "/v1/health",
    summary="Check that the service is up",
    description=(
        "Answers `ok` when the function can reach its table. No authentication; reads nothing of any workspace and "
        "changes nothing."
    ),
)
def health() -> Response[HealthOut]:
    services().table.get("HEALTH", "HEALTH")
    return respond(200, HealthOut())


@app.post(
    "/v1/workspaces",
    summary="Create a workspace",
    description=(
        "Creates a workspace with its own branch key and makes the caller its owner. A `shared` workspace lets "
        "editors write; in a `private` one only owners write (the share type never changes). AI starts off, "
        "retention at 90 days, with no document."
    ),
)
def create_workspace(body: Annotated[CreateWorkspace, Body()]) -> Response[WorkspaceCreated]:
    workspace_id = services().access.create_workspace(human_user(app), body.name, body.share_type)
    return respond(201, WorkspaceCreated(workspace_id=workspace_id))


@app.get(
    "/v1/workspaces",
    summary="List my workspaces",
    description=(
        "The caller's own memberships with their roles, a page at a time (`cursor` from the previous page). A "
        "workspace joined a moment ago may take a moment to appear. Changes nothing."
    ),
)
def list_workspaces(
    limit: Annotated[int, Query(ge=1, le=MAX_WORKSPACES_PAGE)] = MAX_WORKSPACES_PAGE,
    cursor: Annotated[str | None, Query(max_length=200)] = None,
) -> Response[WorkspacesOut]:
    return respond(200, WorkspacesOut.of(services().access.memberships(human_user(app), limit, cursor)))


@app.get(
    "/v1/workspaces/<ws>",
    summary="Read a workspace",
    description=(
        "The workspace's name, share type, AI switch and the caller's role. Any member may read it; anyone else "
        "gets the 404 a missing workspace gets. Changes nothing."
    ),
)
def get_workspace(ws: str) -> Response[WorkspaceOut]:
    return respond(200, WorkspaceOut.of(services().access.view(human_user(app), ws)))


@app.put(
    "/v1/workspaces/<ws>/members/<user_id>",
    summary="Add a member or change a role",
    description=(
        "Makes `userId` an `owner`, `editor` or `viewer` of the workspace. Owners only; the creator's own role "
        "cannot be changed, so a workspace is never locked out of its owner."
    ),
)
def put_member(ws: str, user_id: str, body: Annotated[PutMember, Body()]) -> Response[MemberOut]:
    services().access.put_member(human_user(app), ws, user_id, body.role)
    return respond(200, MemberOut(user_id=user_id, role=body.role))


@app.post(
    "/v1/workspaces/<ws>/members/<user_id>/erasure",
    summary="Erase a member",
    description=(
        "The owner erases a departing member, or a member erases themself; confirmed by `X-Confirm-Member` naming "
        "the member again. Their membership goes at once; then their private entries, working notes, "
        "conversations with their receipts, key sessions and their agents' candidates are deleted, and their "
        "authorship of shared versions and entries is replaced by a pseudonym (the text stays). 202 with the "
        "erasure; its receipt (counts per kind) at `GET …/erasures/{erasureId}`. The owner cannot be erased."
    ),
)
def erase_member(
    ws: str, user_id: str, confirmation: Annotated[str | None, Header(alias="x-confirm-member")] = None
) -> Response[ErasureOut]:
    return respond(202, ErasureOut.of(erasure_service().erase(human_user(app), ws, user_id, confirmation)))


@app.get(
    "/v1/workspaces/<ws>/erasures/<erasure_id>",
    summary="Read an erasure's receipt",
    description=(
        "For the workspace's owner and for whoever asked for the erasure (even once no longer a member); anyone "
        "else gets 404. While it runs, `status` is `running`; then the counts per kind of what was deleted and "
        "pseudonymized. Ids and counts only."
    ),
)
def get_erasure(ws: str, erasure_id: str) -> Response[ErasureOut]:
    return respond(200, ErasureOut.of(erasure_service().receipt(human_user(app), ws, erasure_id)))


@app.put(
    "/v1/workspaces/<ws>/ai",
    summary="Turn the assistant on or off",
    description=(
        "Owners only. Every toggle, even to the same value, bumps the workspace's consent revision: every turn "
        "admitted before it is retired at its next step. While AI is off no turn is admitted (403 `AI_DISABLED`)."
    ),
)
def set_ai(ws: str, body: Annotated[SetAi, Body()]) -> Response[AiOut]:
    return respond(200, AiOut.of(services().access.set_ai(human_user(app), ws, body.enabled)))


@app.get(
    "/v1/workspaces/<ws>/consolidation",
    summary="Read the consolidation settings",
    description=(
        "Owners only. Whether the workspace is consolidated every night (`enabled`, off by default), whether "
        "filing proposals may apply without review (`autoFile`), the `revision` to compare-and-set on, and "
        "whether its nightly schedule exists now (`scheduled`, read from the workflow service), with its `cron` "
        "(UTC) and `nextRunAt`. Changes nothing."
    ),
)
def get_consolidation(ws: str) -> Response[ConsolidationOut]:
    return respond(200, ConsolidationOut.of(consolidation_control().view(human_user(app), ws)))


@app.put(
    "/v1/workspaces/<ws>/consolidation",
    summary="Opt in to (or out of) nightly consolidation",
    description=(
        "Owners only, by compare-and-set on `expectedRevision` (409 `STALE_REVISION` naming `currentRevision`). "
        "Opting in creates the workspace's nightly schedule (or keeps it), opting out deletes it; every write "
        "bumps the revision and is audited, even to the same value. When the setting is stored but the schedule "
        "cannot be changed, 503 `UNAVAILABLE` names the new `currentRevision`: send it again to repair it."
    ),
)
def set_consolidation(ws: str, body: Annotated[SetConsolidation, Body()]) -> Response[ConsolidationOut]:
    view = consolidation_control().set(human_user(app), ws, body.enabled, body.auto_file, body.expected_revision)
    return respond(200, ConsolidationOut.of(view))


@app.post(
    "/v1/workspaces/<ws>/consolidation/runs",
    summary="Consolidate now",
    description=(
        "Owners only, whether or not the nightly schedule is on. One run at a time per workspace: 202 with the "
        "run just started, or 200 with the run still going (the owner's last one, or tonight's scheduled one: "
        "`trigger`). The request is audited when it starts a run."
    ),
)
def start_consolidation(ws: str) -> Response[ConsolidationRunOut]:
    answer = consolidation_control().start_run(human_user(app), ws)
    return respond(202 if answer.started else 200, ConsolidationRunOut.of(answer))


@app.post(
    "/v1/workspaces/<ws>/key-sessions",
    summary="Delegate to an agent runtime (open a key session)",
    description=(
        "Any member opens an expiring, scoped delegation (60 s to 12 h, default 1 h) for an agent runtime of their "
        "own. Without `scopes` it holds `memory:read` only; a viewer may delegate reading only (403 "
        "`SCOPE_EXCEEDS_ROLE`, nothing stored). Needs workspace AI on. With `bind`, the session's agents stay "
        "inside entry scopes, types and key prefixes: a write outside is 403 `OUTSIDE_KEY_SESSION_BINDING`, and "
        "reads, search and recall leave out what is outside; a bad `bind` is 400 `INVALID_KEY_SESSION_BINDING`, "
        "nothing stored. Key prefixes are sealed."
    ),
)
def open_key_session(ws: str, body: Annotated[OpenKeySession, Body()]) -> Response[KeySessionOut]:
    session = services().key_sessions.open(human_user(app), ws, body.ttl_seconds, body.scopes, body.bind)
    return respond(201, KeySessionOut.of(session))


@app.get(
    "/v1/workspaces/<ws>/key-sessions",
    summary="List my key sessions",
    description=(
        "The key sessions the caller opened in this workspace, newest first, with their scopes, expiry and "
        "revocation; never another member's. Changes nothing."
    ),
)
def list_key_sessions(
    ws: str,
    limit: Annotated[int, Query(ge=1, le=MAX_PAGE)] = 20,
    cursor: Annotated[str | None, Query(max_length=200)] = None,
) -> Response[KeySessionsOut]:
    """The caller's own key sessions only, newest first."""
    return respond(200, KeySessionsOut.of(services().key_sessions.list_own(human_user(app), ws, limit, cursor)))


@app.delete(
    "/v1/workspaces/<ws>/key-sessions/<session_id>",
    summary="Revoke a key session",
    description=(
        "Its opener or an owner revokes it for good: every turn and automation call admitted under it is cut off "
        "at its next step, and it can never come back. 204 with no body."
    ),
)
def revoke_key_session(ws: str, session_id: str) -> Response[str]:
    services().key_sessions.revoke(human_user(app), ws, session_id)
    return no_content()


@app.delete(
    "/v1/workspaces/<ws>",
    summary="Delete a workspace",
    description=(
        "Owners only, confirmed by `X-Confirm-Workspace` naming the workspace again. The workspace is tombstoned "
        "at once (its routes answer 404 from then on, but for `GET …/deletion`), its branch key destroyed and "
        "the purge of its items started; 202 with the deletion's progress. A repeat answers the same progress."
    ),
)
def delete_workspace(
    ws: str, confirmation: Annotated[str | None, Header(alias="x-confirm-workspace")] = None
) -> Response[DeletionOut]:
    """Tombstone, branch key destroyed, purge started: 202 with the deletion's progress (the Temporal client
    is built here, on first use: no other route of this function pays for it)."""
    return respond(202, DeletionOut.of(deletion_service().delete(human_user(app), ws, confirmation)))


@app.get(
    "/v1/workspaces/<ws>/deletion",
    summary="Follow a workspace's deletion",
    description=(
        "The progress of a deletion, for the owner who asked for it only (anyone else, or no deletion: 404). "
        "Changes nothing."
    ),
)
def get_deletion(ws: str) -> Response[DeletionOut]:
    return respond(200, DeletionOut.of(deletion_service().progress(human_user(app), ws)))


@app.get(
    "/v1/workspaces/<ws>/audit",
    summary="Read the audit trail",
    description=(
        "Who (a person, or an agent on a person's turn or key session) changed what, newest first: the kind of "
        "change, its ids and versions, when. Never text. The owner reads every member's events; any other "
        "member only their own (asking for someone else's is refused). Filters: `since`/`until` (RFC 3339 UTC, "
        "inclusive), `actor`, `kind`. A page may hold fewer than `limit` events; follow `nextCursor` until it "
        "is null. Changes nothing."
    ),
)
def read_audit(
    ws: str,
    since: Annotated[str | None, Query(max_length=40)] = None,
    until: Annotated[str | None, Query(max_length=40)] = None,
    actor: Annotated[str | None, Query(min_length=1, max_length=200)] = None,
    kind: Annotated[AuditKind | None, Query()] = None,
    limit: Annotated[int, Query(ge=1, le=MAX_AUDIT_PAGE)] = DEFAULT_AUDIT_PAGE,
    cursor: Annotated[str | None, Query(max_length=200)] = None,
) -> Response[AuditOut]:
    query = AuditQuery(parse_time(since, "since"), parse_time(until, "until"), actor, kind, limit, cursor)
    return respond(200, AuditOut.of(services().audit.list(human_user(app), ws, query)))


handler: Any = lambda_entry(app)
