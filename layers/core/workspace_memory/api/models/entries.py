"""Memory entries (docs/architecture.md#entries): entries and their history, candidates, search."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal, Self

from workspace_memory.api.models.base import FindingOut, OutModel, Untrusted, findings_out, omitted_when_none
from workspace_memory.kernel.terms import (
    CitationKind,
    CitationState,
    EntryScope,
    EntryStatus,
    EntryType,
)

if TYPE_CHECKING:  # the domain objects the models are built `of`: not imported at a handler's cold start
    from workspace_memory.entries.agent_memories import AgentMemoriesForgotten
    from workspace_memory.entries.index import Budget
    from workspace_memory.entries.model import EntryRow, EntryView, Marked, Page, Written
    from workspace_memory.search.entry_search import SearchResult


class EntryWritten(OutModel):
    entry_id: str
    revision: int
    superseded: bool | None = omitted_when_none()
    """True when a create named a key in use: that chain got the new revision."""
    warnings: list[FindingOut] | None = omitted_when_none()
    forgotten: bool | None = omitted_when_none()
    """True when an accepted forget proposal forgot the chain (`revision`: the one it was forgotten at)."""

    @classmethod
    def of(cls, written: Written) -> EntryWritten:
        return cls(
            entry_id=written.entry_id,
            revision=written.revision,
            superseded=written.superseded or None,
            warnings=findings_out(written.warnings),
            forgotten=written.forgotten or None,
        )


class EntryMarked(OutModel):
    """An entry's marks after a pin, an unpin or a verification (the revision they are on; no text)."""

    entry_id: str
    revision: int
    pinned: bool
    verified_at: str | None = omitted_when_none()
    verified_by: str | None = omitted_when_none()

    @classmethod
    def of(cls, marked: Marked) -> EntryMarked:
        return cls.model_validate(marked, from_attributes=True)


class CitationOut(OutModel):
    kind: CitationKind
    ref: str
    sha256: str
    locator: str
    state: CitationState


class PreviouslyOut(OutModel):
    """What the revision this one replaced said (its summary, at most 160 characters), and until when."""

    summary: str
    until: str


class EntryOut(OutModel):
    entry_id: str
    revision: int
    scope: EntryScope
    key: str | None
    type: EntryType
    status: EntryStatus
    title: str
    summary: str
    body: str
    valid_from: str
    valid_to: str | None
    author: str
    author_kind: str
    superseded_by: int | None = omitted_when_none()
    superseded_reason: str | None = omitted_when_none()
    previously: PreviouslyOut | None = omitted_when_none()
    citations: list[CitationOut]
    reads: int = 0
    last_read_at: str | None = omitted_when_none()
    pinned: bool = False
    """A person pinned the chain: agents may read it, never write over it."""
    verified_at: str | None = omitted_when_none()
    verified_by: str | None = omitted_when_none()
    """Who confirmed this revision still holds, and when (left out until someone does; a new revision resets it)."""

    @classmethod
    def of(cls, view: EntryView) -> Self:
        text = view.text
        return cls(
            entry_id=view.entry_id,
            revision=view.revision,
            scope=view.scope,
            key=text.key,
            type=view.type,
            status=view.status,
            title=text.title,
            summary=text.summary,
            body=text.body,
            valid_from=view.valid_from,
            valid_to=view.valid_to,
            author=view.author,
            author_kind=view.author_kind,
            superseded_by=view.superseded_by,
            superseded_reason=view.superseded_reason,
            previously=None
            if text.previously is None
            else PreviouslyOut(summary=text.previously.summary, until=text.previously.until),
            citations=[
                CitationOut(
                    kind=c.source.kind,
                    ref=c.source.ref,
                    sha256=c.source.sha256,
                    locator=c.source.locator,
                    state=c.state,
                )
                for c in view.citations
            ],
            reads=view.reads,
            last_read_at=view.last_read_at,
            pinned=view.pinned,
            verified_at=view.verified_at,
            verified_by=view.verified_by,
        )


class EntryRowOut(OutModel):
    """A list or history line; a forgotten chain's tombstone has no type, title or summary."""

    entry_id: str
    revision: int
    scope: EntryScope
    type: EntryType | None
    status: EntryStatus
    title: str | None
    summary: str | None
    valid_from: str | None
    valid_to: str | None
    author: str | None
    superseded_reason: str | None = omitted_when_none()
    reads: int | None = omitted_when_none()
    """List lines: how often the chain was read (advisory); history lines leave it out."""
    last_read_at: str | None = omitted_when_none()
    size_bytes: int | None = omitted_when_none()
    """List lines: the UTF-8 bytes of the title, summary and body."""
    pinned: bool | None = omitted_when_none()
    """List lines: the chain's pin; history lines leave it and the verification out."""
    verified_at: str | None = omitted_when_none()
    verified_by: str | None = omitted_when_none()
    source_state: Literal[CitationState.OK, CitationState.CHANGED] | None = omitted_when_none()
    """List lines of a revision that cites something: `ok`, or `changed` when a cited text no longer hashes the
    same (an entry whose cited source is gone is not listed: the page's `hidden`); left out when it cites nothing
    and on history lines."""

    @classmethod
    def of(cls, row: EntryRow) -> EntryRowOut:
        return cls.model_validate(row, from_attributes=True)


class BudgetOut(OutModel):
    """What one section of recall spends of its budget: lines and bytes shown, its limits, entries left out."""

    lines: int
    bytes: int
    max_bytes: int
    max_lines: int | None = omitted_when_none()
    left_out: int
    truncated: bool

    @classmethod
    def of(cls, budget: Budget) -> Self:
        return cls.model_validate(budget, from_attributes=True)  # `truncated` is the budget's property


class RecallBudgetsOut(OutModel):
    """The rules block and the index the caller's turns are given now, as counts (never their lines)."""

    rules: BudgetOut
    index: BudgetOut


class EntriesOut(OutModel):
    entries: list[EntryRowOut]
    next_cursor: str | None
    hidden: int | None = omitted_when_none()
    """List pages: how many matching entries this page left out because a cited source is gone, expired, purged,
    forgotten or not visible to the caller (so a page may hold fewer than `limit`; `nextCursor` still resumes
    after them). History pages leave it out."""
    budgets: RecallBudgetsOut | None = omitted_when_none()
    """On the first page only (no `cursor`), whatever the filters: what recall's rules block and index spend of
    their budgets for the caller, and whether an entry was left out of them (it is still found by search)."""

    @classmethod
    def of(cls, page: Page, budgets: tuple[Budget, Budget] | None = None) -> Self:
        said = (
            None
            if budgets is None
            else RecallBudgetsOut(rules=BudgetOut.of(budgets[0]), index=BudgetOut.of(budgets[1]))
        )
        rows = [EntryRowOut.of(r) for r in page.rows]
        return cls(entries=rows, next_cursor=page.next_cursor, hidden=page.hidden, budgets=said)


class SearchResultOut(OutModel):
    """One hit: the revision ranked, its index line, and its fused score (reciprocal rank fusion: higher first)."""

    entry_id: str
    revision: int
    title: str
    summary: str
    score: float

    @classmethod
    def of(cls, result: SearchResult) -> SearchResultOut:
        return cls.model_validate(result, from_attributes=True)


class SearchOut(OutModel):
    """docs/architecture.md#search-routes: `{results: [{entryId, revision, title, summary, score}]}`, best first."""

    results: list[SearchResultOut]

    @classmethod
    def of(cls, results: Sequence[SearchResult]) -> Self:
        return cls(results=[SearchResultOut.of(r) for r in results])


class ForgottenOut(OutModel):
    forgotten: int
    """How many active chains were forgotten."""


class AgentMemoriesForgottenOut(OutModel):
    """One call of the owner's forget of every agent memory: ids and counts, never text. `nextCursor` set means
    the workspace holds more to examine: call again with it."""

    forgotten: int
    entry_ids: list[str]
    kept: int
    """Active chains this call examined and left whole: a person wrote a retained revision of them."""
    dismissed: int
    candidate_ids: list[str]
    next_cursor: str | None

    @classmethod
    def of(cls, done: AgentMemoriesForgotten) -> AgentMemoriesForgottenOut:
        return cls(
            forgotten=len(done.entry_ids),
            entry_ids=list(done.entry_ids),
            kept=done.left,
            dismissed=len(done.candidate_ids),
            candidate_ids=list(done.candidate_ids),
            next_cursor=done.next_cursor,
        )


class AgentEntryOut(EntryOut, Untrusted):
    """An entry as an agent is handed it (`read_memory`): marked untrusted, never evidence."""


class AgentEntriesOut(EntriesOut, Untrusted):
    """A list as an agent is handed it: marked untrusted, never evidence."""


class AgentSearchOut(SearchOut, Untrusted):
    """Search results as an agent is handed them (`search_memory`): marked untrusted, never evidence."""
