"""Memory entries (human routes, docs/architecture.md#entries): create, list, read (`asOf`), supersede, history, forget,
the owner's forget of one member's entries, the agents' candidates, and search."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Body, Header, Query

from workspace_memory.api.http import (
    build_resolver,
    human_user,
    lambda_entry,
    no_content,
    refuse_unknown_parameters,
    respond,
)
from workspace_memory.api.models.entries import (
    CandidateOut,
    CandidatesOut,
    EntriesOut,
    EntryOut,
    EntryWritten,
    ForgottenOut,
    SearchOut,
)
from workspace_memory.api.schemas import (
    CreateEntry,
    DecideCandidate,
    EntryFields,
    SupersedeEntry,
    parse_as_of,
    parse_base_revision,
)
from workspace_memory.bootstrap import services
from workspace_memory.kernel.terms import EntryScope, EntryStatus, EntryType

if TYPE_CHECKING:
    from workspace_memory.entries.model import Draft

app = build_resolver()

BaseRevision = Annotated[str | None, Header(alias="x-base-revision")]
Limit = Annotated[int, Query(ge=1, le=100)]
Cursor = Annotated[str | None, Query(max_length=200)]
AsOf = Annotated[str | None, Query(alias="asOf", max_length=40)]


def _draft(
    fields: EntryFields,
    *,
    key: str | None = None,
    scope: EntryScope = EntryScope.WORKSPACE,
    agent: str | None = None,
    reason: str | None = None,
) -> Draft:
    """The service's draft (imported on first use: the services' modules are not a cold-start cost)."""
    from workspace_memory.entries.model import Draft, EntryText, Source

    sources = tuple(Source(s.kind, s.ref, s.sha256, s.locator) for s in fields.sources)
    text = EntryText(fields.title, fields.summary, fields.body, sources, key)
    return Draft(fields.type, text, scope, agent, reason)


@app.post("/v1/workspaces/<ws>/entries")
def create_entry(ws: str, body: Annotated[CreateEntry, Body()]) -> Response[EntryWritten]:
    draft = _draft(body, key=body.key, scope=body.scope, agent=body.agent)
    written = services().entries.create(human_user(app), ws, draft)
    return respond(200 if written.superseded else 201, EntryWritten.of(written))


@app.get("/v1/workspaces/<ws>/entries")
def list_entries(
    ws: str,
    scope: Annotated[EntryScope | None, Query()] = None,
    type: Annotated[EntryType | None, Query()] = None,
    status: Annotated[EntryStatus, Query()] = EntryStatus.ACTIVE,
    key: Annotated[str | None, Query(max_length=300)] = None,
    as_of: AsOf = None,
    limit: Limit = 20,
    cursor: Cursor = None,
) -> Response[EntriesOut]:
    from workspace_memory.entries.model import Filters

    filters = Filters(scope, type, status, key, parse_as_of(as_of))
    return respond(200, EntriesOut.of(services().entries.list_entries(human_user(app), ws, filters, limit, cursor)))


@app.get("/v1/workspaces/<ws>/entries/<entry_id>")
def read_entry(ws: str, entry_id: str, as_of: AsOf = None) -> Response[EntryOut]:
    return respond(200, EntryOut.of(services().entries.read(human_user(app), ws, entry_id, parse_as_of(as_of))))


@app.put("/v1/workspaces/<ws>/entries/<entry_id>")
def supersede_entry(
    ws: str, entry_id: str, body: Annotated[SupersedeEntry, Body()], base: BaseRevision = None
) -> Response[EntryWritten]:
    draft = _draft(body, reason=body.reason)
    written = services().entries.supersede(human_user(app), ws, entry_id, draft, parse_base_revision(base))
    return respond(200, EntryWritten.of(written))


@app.delete("/v1/workspaces/<ws>/entries/<entry_id>")
def forget_entry(ws: str, entry_id: str) -> Response[str]:
    services().entries.forget(human_user(app), ws, entry_id)
    return no_content()


@app.get("/v1/workspaces/<ws>/entries/<entry_id>/history")
def entry_history(ws: str, entry_id: str, limit: Limit = 20, cursor: Cursor = None) -> Response[EntriesOut]:
    return respond(200, EntriesOut.of(services().entries.history(human_user(app), ws, entry_id, limit, cursor)))


@app.delete("/v1/workspaces/<ws>/members/<user_id>/entries")
def forget_member_entries(ws: str, user_id: str) -> Response[ForgottenOut]:
    return respond(200, ForgottenOut(forgotten=services().entries.forget_member(human_user(app), ws, user_id)))


@app.get("/v1/workspaces/<ws>/candidates")
def list_candidates(ws: str, limit: Limit = 20, cursor: Cursor = None) -> Response[CandidatesOut]:
    views, next_cursor = services().entries.candidates(human_user(app), ws, limit, cursor)
    return respond(200, CandidatesOut(candidates=[CandidateOut.of(v) for v in views], next_cursor=next_cursor))


@app.post("/v1/workspaces/<ws>/candidates/<candidate_id>/accept")
def accept_candidate(ws: str, candidate_id: str, body: Annotated[DecideCandidate, Body()]) -> Response[EntryWritten]:
    written = services().entries.accept(human_user(app), ws, candidate_id, body.revision)
    return respond(200, EntryWritten.of(written))


@app.post("/v1/workspaces/<ws>/candidates/<candidate_id>/reject")
def reject_candidate(ws: str, candidate_id: str, body: Annotated[DecideCandidate, Body()]) -> Response[str]:
    services().entries.reject(human_user(app), ws, candidate_id, body.revision)
    return no_content()


SEARCH_PARAMETERS = frozenset({"q", "k", "scope", "type", "keyPrefix", "asOf"})


@app.get("/v1/workspaces/<ws>/search")
def search_entries(
    ws: str,
    q: Annotated[str, Query(min_length=1, max_length=1024)],
    k: Annotated[int, Query(ge=1, le=20)] = 5,
    scope: Annotated[EntryScope | None, Query()] = None,
    type: Annotated[EntryType | None, Query()] = None,
    key_prefix: Annotated[str | None, Query(alias="keyPrefix", max_length=200)] = None,
    as_of: AsOf = None,
) -> Response[SearchOut]:
    """Any member may search; another member's private entries never take part
    (docs/architecture.md#scopes-and-visibility)."""
    from workspace_memory.search.entry_search import SearchFilters

    refuse_unknown_parameters(app, SEARCH_PARAMETERS)
    filters = SearchFilters(scope, type, key_prefix, parse_as_of(as_of))
    return respond(200, SearchOut.of(services().search.search(human_user(app), ws, q, k, filters)))


handler: Any = lambda_entry(app)
