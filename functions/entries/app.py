"""Memory entries (human routes, docs/architecture.md#entries): create, list, read (`asOf`), supersede, revert, pin,
verify, history, forget, the owner's forget of one member's entries or of every agent memory, the agents'
candidates, and search; and the pages that group entries (`api/page_routes.py`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Body, Header, Query

from workspace_memory.api.consolidation_routes import register as register_consolidation
from workspace_memory.api.http import (
    build_resolver,
    human_user,
    lambda_entry,
    no_content,
    refuse_unknown_parameters,
    respond,
)
from workspace_memory.api.models.candidates import CandidateOut, CandidatesOut
from workspace_memory.api.models.entries import (
    AgentMemoriesForgottenOut,
    EntryMarked,
    EntryOut,
    EntryWritten,
    ForgottenOut,
    SearchOut,
)
from workspace_memory.api.models.entry_pages import EntriesOut
from workspace_memory.api.models.mentions import MentionsOut
from workspace_memory.api.models.reindex import ReindexOut
from workspace_memory.api.page_routes import router as page_routes
from workspace_memory.api.schemas.entries import (
    CreateEntry,
    DecideCandidate,
    FindMentions,
    RevertEntry,
    SupersedeEntry,
)
from workspace_memory.api.schemas.entry_fields import EntryFields
from workspace_memory.api.schemas.params import parse_as_of, parse_base_revision
from workspace_memory.bootstrap import mention_search, reindexer, services
from workspace_memory.kernel.terms import EntryScope, EntryStatus, EntryType

if TYPE_CHECKING:
    from workspace_memory.entries.model import Draft

app = build_resolver()
app.include_router(page_routes)

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


@app.post(
    "/v1/workspaces/<ws>/entries",
    summary="Create an entry",
    description=(
        "A titled memory beside the document, in `workspace`, `member` (private) or `agent` scope. Workspace and "
        "agent entries need write right; a private one is its member's own. A key already in use supersedes that "
        "chain instead (200 with `superseded: true`)."
    ),
)
def create_entry(ws: str, body: Annotated[CreateEntry, Body()]) -> Response[EntryWritten]:
    draft = _draft(body, key=body.key, scope=body.scope, agent=body.agent)
    written = services().entries.create(human_user(app), ws, draft)
    return respond(200 if written.superseded else 201, EntryWritten.of(written))


@app.get(
    "/v1/workspaces/<ws>/entries",
    summary="List entries",
    description=(
        "The active entries the caller may see, filtered by scope, type, key or `asOf`, a page at a time; another "
        "member's private entries never appear. The first page also says what the caller's turns are given of the "
        "rules block and the index (`budgets`: lines, bytes, limits, left out). Changes nothing."
    ),
)
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
    entries, user = services().entries, human_user(app)
    page = entries.list_entries(user, ws, filters, limit, cursor)
    return respond(200, EntriesOut.of(page, entries.recall_budgets(user, ws) if cursor is None else None))


@app.get(
    "/v1/workspaces/<ws>/entries/<entry_id>",
    summary="Read an entry",
    description=(
        "The entry's current revision (or the one valid at `asOf`) with its citations re-checked. Private entries "
        "are their member's only (anyone else: 404); a forgotten entry is 410. Changes nothing."
    ),
)
def read_entry(ws: str, entry_id: str, as_of: AsOf = None) -> Response[EntryOut]:
    return respond(200, EntryOut.of(services().entries.read(human_user(app), ws, entry_id, parse_as_of(as_of))))


@app.put(
    "/v1/workspaces/<ws>/entries/<entry_id>",
    summary="Change an entry",
    description=(
        "Writes the next revision if `X-Base-Revision` is still the current one (409 `STALE_REVISION` with the "
        "revision it lost to); the chain never forks. Changes type and text only: scope, key and agent belong to "
        "the chain. Needs write right on the entry's scope."
    ),
)
def supersede_entry(
    ws: str, entry_id: str, body: Annotated[SupersedeEntry, Body()], base: BaseRevision = None
) -> Response[EntryWritten]:
    draft = _draft(body, reason=body.reason)
    written = services().entries.supersede(human_user(app), ws, entry_id, draft, parse_base_revision(base))
    return respond(200, EntryWritten.of(written))


@app.post(
    "/v1/workspaces/<ws>/entries/<entry_id>/revert",
    summary="Revert an entry to an earlier revision",
    description=(
        "Undo for an entry: writes the next revision, on `X-Base-Revision`, with the type and text of the earlier "
        "`revision` (still retained; else 404 `REVISION_NOT_FOUND`; the current one is 400 `REVERT_TO_CURRENT`). "
        "Nothing is deleted: the history keeps every revision. Needs write right on the entry's scope."
    ),
)
def revert_entry(
    ws: str, entry_id: str, body: Annotated[RevertEntry, Body()], base: BaseRevision = None
) -> Response[EntryWritten]:
    revert = services().entries.revert
    return respond(
        200, EntryWritten.of(revert(human_user(app), ws, entry_id, body.revision, parse_base_revision(base)))
    )


_PIN = (
    "Agents (the automation routes, the MCP tools, a turn's tools) may still read a pinned entry, never supersede, "
    "forget or propose over it (409 `ENTRY_PINNED`, nothing stored); a person may still edit, revert or forget it. "
)


@app.put(
    "/v1/workspaces/<ws>/entries/<entry_id>/pin",
    summary="Pin an entry",
    description=(
        _PIN + "Set on the revision in `X-Base-Revision` (else 409 `STALE_REVISION`), which stays current: a pin is "
        "no revision. Pinning a pinned entry changes nothing. Needs write right on the entry's scope."
    ),
)
def pin_entry(ws: str, entry_id: str, base: BaseRevision = None) -> Response[EntryMarked]:
    pin = services().entries.pin
    return respond(200, EntryMarked.of(pin(human_user(app), ws, entry_id, parse_base_revision(base), pinned=True)))


@app.delete(
    "/v1/workspaces/<ws>/entries/<entry_id>/pin",
    summary="Unpin an entry",
    description=(
        "Agents may write over the entry again. On the revision in `X-Base-Revision` (else 409 `STALE_REVISION`); "
        "unpinning an unpinned entry changes nothing. Needs write right on the entry's scope."
    ),
)
def unpin_entry(ws: str, entry_id: str, base: BaseRevision = None) -> Response[EntryMarked]:
    pin = services().entries.pin
    return respond(200, EntryMarked.of(pin(human_user(app), ws, entry_id, parse_base_revision(base), pinned=False)))


@app.post(
    "/v1/workspaces/<ws>/entries/<entry_id>/verify",
    summary="Mark an entry verified",
    description=(
        "The caller confirms the revision in `X-Base-Revision`, the current one (else 409 `STALE_REVISION`), still "
        "holds: the entry shows `verifiedAt` (now) and `verifiedBy` (the caller) until the next revision, which "
        "resets both. Needs write right on the entry's scope."
    ),
)
def verify_entry(ws: str, entry_id: str, base: BaseRevision = None) -> Response[EntryMarked]:
    verify = services().entries.verify
    return respond(200, EntryMarked.of(verify(human_user(app), ws, entry_id, parse_base_revision(base))))


@app.delete(
    "/v1/workspaces/<ws>/entries/<entry_id>",
    summary="Forget an entry",
    description=(
        "Deletes every revision of the chain and its key, leaving a tombstone (reading it then answers 410). Needs "
        "write right on the entry's scope. 204 with no body."
    ),
)
def forget_entry(ws: str, entry_id: str) -> Response[str]:
    services().entries.forget(human_user(app), ws, entry_id)
    return no_content()


@app.get(
    "/v1/workspaces/<ws>/entries/<entry_id>/history",
    summary="List an entry's revisions",
    description=(
        "The chain's revisions newest first, a page at a time; expired ones are left out. Same visibility as "
        "reading the entry. Changes nothing."
    ),
)
def entry_history(ws: str, entry_id: str, limit: Limit = 20, cursor: Cursor = None) -> Response[EntriesOut]:
    return respond(200, EntriesOut.of(services().entries.history(human_user(app), ws, entry_id, limit, cursor)))


@app.delete(
    "/v1/workspaces/<ws>/members/<user_id>/entries",
    summary="Forget all of a member's private entries",
    description=(
        "Owners only: forgets every private entry of `userId` without reading them; answers how many. Other scopes "
        "are untouched."
    ),
)
def forget_member_entries(ws: str, user_id: str) -> Response[ForgottenOut]:
    return respond(200, ForgottenOut(forgotten=services().entries.forget_member(human_user(app), ws, user_id)))


@app.delete(
    "/v1/workspaces/<ws>/agent-memories",
    summary="Forget every agent memory",
    description=(
        "Owners only: forgets every entry chain all of whose retained revisions an agent wrote, in every scope and "
        "of every member, with its revisions and its place in search, and dismisses every pending candidate, "
        "without reading them; answers ids and counts. A chain a person wrote a revision of is kept whole. Each "
        "call examines a bounded number of items: while `nextCursor` is set, call again with `cursor`. A retry "
        "changes nothing twice."
    ),
)
def forget_agent_memories(ws: str, cursor: Cursor = None) -> Response[AgentMemoriesForgottenOut]:
    done = services().entries.forget_agent_memories(human_user(app), ws, cursor)
    return respond(200, AgentMemoriesForgottenOut.of(done))


@app.get(
    "/v1/workspaces/<ws>/candidates",
    summary="List candidates awaiting a decision",
    description=(
        "What agents saved in `read_only`, and the forgets they proposed, with everything accepting would store "
        "and, for a change, a diff against the revision it replaces. A member sees their own private candidates, "
        "and the others when they may write them (who decides them). Changes nothing."
    ),
)
def list_candidates(ws: str, limit: Limit = 20, cursor: Cursor = None) -> Response[CandidatesOut]:
    views, next_cursor = services().entries.candidates(human_user(app), ws, limit, cursor)
    return respond(200, CandidatesOut(candidates=[CandidateOut.of(v) for v in views], next_cursor=next_cursor))


@app.post(
    "/v1/workspaces/<ws>/candidates/<candidate_id>/accept",
    summary="Accept a candidate",
    description=(
        "Stores the candidate (or forgets its entry) by compare-and-set on the candidate's `revision`, in the same "
        "transaction as the entry write. A candidate whose base is no longer the head is 409 `STALE_REVISION`: it "
        "never overwrites text it did not show. Needs write right on its scope."
    ),
)
def accept_candidate(ws: str, candidate_id: str, body: Annotated[DecideCandidate, Body()]) -> Response[EntryWritten]:
    written = services().entries.accept(human_user(app), ws, candidate_id, body.revision)
    return respond(200, EntryWritten.of(written))


@app.post(
    "/v1/workspaces/<ws>/candidates/<candidate_id>/reject",
    summary="Reject a candidate",
    description=(
        "Decides the candidate as rejected (by compare-and-set on its `revision`); nothing is stored and its text "
        "is dropped. Needs write right on its scope. 204 with no body."
    ),
)
def reject_candidate(ws: str, candidate_id: str, body: Annotated[DecideCandidate, Body()]) -> Response[str]:
    services().entries.reject(human_user(app), ws, candidate_id, body.revision)
    return no_content()


SEARCH_PARAMETERS = frozenset({"q", "k", "scope", "type", "keyPrefix", "asOf"})


@app.get(
    "/v1/workspaces/<ws>/search",
    summary="Search entries",
    description=(
        "Any member's best `k` entries for `q` (BM25 and embeddings, fused), filtered by scope, type, key prefix "
        "and `asOf`; another member's private entries never take part. An undeclared query parameter is 400 "
        "`UNKNOWN_PARAMETER`. Changes nothing."
    ),
)
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


@app.post(
    "/v1/workspaces/<ws>/search/reindex",
    summary="Build the workspace's search snapshot ahead of its first search",
    description=(
        "The owner's reindex, one bounded step a call: up to 250 revisions the sealed search snapshot lacks are "
        "decrypted and the snapshot sealed again, so a cold process answers its first search from one decryption. "
        "Call again while `complete` is false; a step resumes from what the last one sealed, from any process. "
        "Counts only; a forget starts it over. Owner only (403 `FORBIDDEN`)."
    ),
)
def reindex_search(ws: str) -> Response[ReindexOut]:
    return respond(200, ReindexOut.of(reindexer().step(human_user(app), ws)))


@app.post(
    "/v1/workspaces/<ws>/mentions",
    summary="Find where stored text mentions someone",
    description=(
        "The owner's search of every stored document version and every entry revision they may see for any of "
        "`terms` (a person's name, their e-mail; compared without regard to case, width or spacing), before or "
        "after erasing a member, to purge or forget what they decide to. Answers ids only; the terms are "
        "never stored or logged. At most 2,000 texts are read a call (`complete: false` past it)."
    ),
)
def find_mentions(ws: str, body: Annotated[FindMentions, Body()]) -> Response[MentionsOut]:
    return respond(200, MentionsOut.of(mention_search().find(human_user(app), ws, body.terms)))


register_consolidation(app)
handler: Any = lambda_entry(app)
