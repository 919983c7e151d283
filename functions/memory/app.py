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
from workspace_memory.api.schemas.document import ApplyProposal, PurgeLine, PutRetention, SaveDocument, SetPolicy, Undo
from workspace_memory.api.schemas.params import parse_base_version
from workspace_memory.bootstrap import services

app = build_resolver()

BaseVersion = Annotated[str | None, Header(alias="x-base-version")]


@app.get(
    "/v1/workspaces/<ws>/memory/policy",
    summary="Read the memory policy",
    description=(
        "The mode (`off`, `read_only`, `auto`), the policy revision to compare-and-set on, and the clear "
        "generation. Any member may read it; a workspace that never set one reads as `read_only`, 0, 0. Changes "
        "nothing."
    ),
)
def get_policy(ws: str) -> Response[PolicyOut]:
    return respond(200, PolicyOut.of(services().policy.get(human_user(app), ws)))


@app.put(
    "/v1/workspaces/<ws>/memory/policy",
    summary="Change the memory policy",
    description=(
        "Owners only, by compare-and-set on `expectedRevision` (409 `STALE_POLICY_REVISION` naming the current "
        "policy). Every change bumps the revision, even to the same mode, so every turn admitted before it is "
        "retired."
    ),
)
def set_policy(ws: str, body: Annotated[SetPolicy, Body()]) -> Response[PolicyOut]:
    policy = services().policy.set(human_user(app), ws, body.mode, body.expected_revision)
    return respond(200, PolicyOut.of(policy))


@app.get(
    "/v1/workspaces/<ws>/memory",
    summary="Read the memory document",
    description=(
        "The current version's Markdown text, its version number and who wrote it. Any member may read it. Changes "
        "nothing."
    ),
)
def read_memory(ws: str) -> Response[DocumentOut]:
    return respond(200, DocumentOut.of(services().document.read(human_user(app), ws)))


@app.put(
    "/v1/workspaces/<ws>/memory",
    summary="Save the memory document",
    description=(
        "Writes a new version if `X-Base-Version` is still the current one (0 creates the first version). A member "
        "with write right may save; a stale base writes nothing and answers 409 `STALE_BASE_VERSION` with "
        "`currentVersion`. At most 64 KiB; text redaction would remove from an agent's edit is kept and reported "
        "in `warnings`."
    ),
)
def save_memory(ws: str, body: Annotated[SaveDocument, Body()], base: BaseVersion = None) -> Response[CommitOut]:
    commit = services().document.save(human_user(app), ws, body.content, parse_base_version(base))
    return respond(200, CommitOut.of(commit))


@app.post(
    "/v1/workspaces/<ws>/memory/clear",
    summary="Clear the memory document",
    description=(
        "Writes an empty version on `X-Base-Version` and bumps the clear generation in the same transaction, so "
        "proposals made before it can no longer be applied; the mode is kept. A member with write right may clear."
    ),
)
def clear_memory(ws: str, base: BaseVersion = None) -> Response[CommitOut]:
    commit = services().document.clear(human_user(app), ws, parse_base_version(base))
    return respond(200, CommitOut.of(commit))


@app.post(
    "/v1/workspaces/<ws>/memory/undo",
    summary="Undo to an earlier version",
    description=(
        "Restores `restoreVersion`'s text as a new version on `X-Base-Version` (nothing is rewound: the clear "
        "generation and the policy stay). A member with write right may undo; an expired version is 404, a purged "
        "one 410."
    ),
)
def undo_memory(ws: str, body: Annotated[Undo, Body()], base: BaseVersion = None) -> Response[CommitOut]:
    commit = services().document.undo(human_user(app), ws, body.restore_version, parse_base_version(base))
    return respond(200, CommitOut.of(commit))


@app.get(
    "/v1/workspaces/<ws>/memory/versions",
    summary="List the document's versions",
    description=(
        "Versions newest first with op, author, size and time, a page at a time; expired versions are left out, "
        "purged ones listed as stubs. Any member may list them. Changes nothing."
    ),
)
def list_versions(
    ws: str,
    limit: Annotated[int, Query(ge=1, le=100)] = 20,
    cursor: Annotated[str | None, Query(max_length=200)] = None,
) -> Response[HistoryOut]:
    return respond(200, HistoryOut.of(services().document.history(human_user(app), ws, limit, cursor)))


@app.get(
    "/v1/workspaces/<ws>/memory/versions/<number>",
    summary="Read one version",
    description=(
        "One version's text and metadata. Any member may read it; a version that expired under retention is 404, a "
        "purged one 410 `VERSION_PURGED`. Changes nothing."
    ),
)
def read_version(ws: str, number: int) -> Response[VersionContentOut]:
    info, content = services().document.read_version(human_user(app), ws, number)
    return respond(200, VersionContentOut.with_content(info, content))


@app.post(
    "/v1/workspaces/<ws>/memory/proposals/apply",
    summary="Apply an agent's proposal",
    description=(
        "Applies a proposal an agent made in `read_only` as a save on `X-Base-Version`. A member with write right "
        "may apply it; one made before a Clear is refused (409 `PROPOSAL_CLEARED`), so cleared text never comes "
        "back."
    ),
)
def apply_proposal(ws: str, body: Annotated[ApplyProposal, Body()], base: BaseVersion = None) -> Response[CommitOut]:
    proposal = body.proposal
    commit = services().capture.apply_proposal(
        human_user(app), ws, proposal.edits, proposal.clear_generation, parse_base_version(base)
    )
    return respond(200, CommitOut.of(commit))


@app.post(
    "/v1/workspaces/<ws>/memory/purge",
    summary="Forget a line from the whole history",
    description=(
        "Owners only. Every retained version holding the line loses its text and becomes a stub (reading it "
        "answers 410). The current version is never purged: if it still holds the line the request is refused (409 "
        "`LINE_IN_HEAD`); edit it out first."
    ),
)
def purge_line(ws: str, body: Annotated[PurgeLine, Body()]) -> Response[PurgeOut]:
    return respond(200, PurgeOut.of(services().purge.purge(human_user(app), ws, body.line)))


@app.get(
    "/v1/workspaces/<ws>/retention",
    summary="Read the retention",
    description=(
        "How many days superseded versions and entry revisions are kept (`historyDays`), and how many days an "
        "active agent-written entry lives without a new revision (`agentDays`); each 1 to 365, default 90. Any "
        "member may read it. Changes nothing."
    ),
)
def get_retention(ws: str) -> Response[RetentionOut]:
    return respond(200, RetentionOut.of(services().retention.windows(human_user(app), ws)))


@app.put(
    "/v1/workspaces/<ws>/retention",
    summary="Change the retention",
    description=(
        "Owners only; `historyDays`, `agentDays` or both (one left out keeps its value). `historyDays` rewrites "
        "the expiry of every version and entry revision already superseded; `agentDays` that of every active "
        "agent-written entry (its last revision's time plus the window); a longer retention never brings an "
        "expired version or entry back. People's entries never expire while they are current."
    ),
)
def set_retention(ws: str, body: Annotated[PutRetention, Body()]) -> Response[RetentionOut]:
    retention = services().retention.set_windows(human_user(app), ws, body.history_days, body.agent_days)
    return respond(200, RetentionOut.of(retention))


handler: Any = lambda_entry(app)
