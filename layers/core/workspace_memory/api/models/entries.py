"""Memory entries (docs/architecture.md#entries): entries and their history, candidates, search."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, Self

from workspace_memory.api.models.base import (
    FindingOut,
    OutModel,
    PossibleConflictOut,
    Untrusted,
    conflicts_out,
    findings_out,
    omitted_when_none,
)
from workspace_memory.kernel.terms import (
    CitationKind,
    CitationState,
    EntryScope,
    EntryStatus,
    EntryType,
)

if TYPE_CHECKING:  # the domain objects the models are built `of`: not imported at a handler's cold start
    from workspace_memory.entries.agent_memories import AgentMemoriesForgotten
    from workspace_memory.entries.model import EntryView, Marked, Written
    from workspace_memory.search.entry_search import Found, SearchResult


class EntryWritten(OutModel):
    entry_id: str
    revision: int
    superseded: bool | None = omitted_when_none()
    """True when a create named a key in use: that chain got the new revision."""
    warnings: list[FindingOut] | None = omitted_when_none()
    forgotten: bool | None = omitted_when_none()
    """True when an accepted forget proposal forgot the chain (`revision`: the one it was forgotten at)."""
    possible_conflicts: list[PossibleConflictOut] | None = omitted_when_none()
    """A create or a revision: the live entries the caller may see that it may contradict (empty: none); it is
    written anyway. Omitted for an accepted candidate (the candidate showed its own)."""

    @classmethod
    def of(cls, written: Written) -> EntryWritten:
        conflicts = written.possible_conflicts
        return cls(
            entry_id=written.entry_id,
            revision=written.revision,
            superseded=written.superseded or None,
            warnings=findings_out(written.warnings),
            forgotten=written.forgotten or None,
            possible_conflicts=None if conflicts is None else conflicts_out(conflicts),
        )


class EntryMarked(OutModel):
    """An entry's marks after a pin, an unpin or a verification (the revision they are on; no text)."""

    entry_id: str
    revision: int
    pinned: bool
    verified_at: str | None = omitted_when_none()
    verified_by: str | None = omitted_when_none()
    verified_evidence: int | None = omitted_when_none()
    """Set when an agent of `verifiedBy` verified it: how many cited sources it re-checked (a person: omitted)."""

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
    superseded_by_entry: str | None = omitted_when_none()
    """The entry this one was retired into (a consolidation proposal a person accepted): it states this now."""
    superseded_reason: str | None = omitted_when_none()
    previously: PreviouslyOut | None = omitted_when_none()
    citations: list[CitationOut]
    reads: int = 0
    last_read_at: str | None = omitted_when_none()
    pinned: bool = False
    """A person pinned the chain: agents may read it, never write over it."""
    verified_at: str | None = omitted_when_none()
    verified_by: str | None = omitted_when_none()
    verified_evidence: int | None = omitted_when_none()
    """Set when an agent of `verifiedBy` verified it: how many cited sources it re-checked (a person: omitted)."""
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
            superseded_by_entry=view.superseded_by_entry,
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
            verified_evidence=view.verified_evidence,
        )


class SearchResultOut(OutModel):
    """One hit: the revision ranked, its index line, and its fused score (reciprocal rank fusion: higher first)."""

    entry_id: str
    revision: int
    title: str
    summary: str
    score: float
    source_state: Literal[CitationState.OK, CitationState.CHANGED] | None = omitted_when_none()
    """A hit whose revision cites something: `ok`, or `changed` when a cited text no longer hashes the same (a hit
    whose cited source is gone is not answered: the answer's `hidden`); left out when it cites nothing."""

    @classmethod
    def of(cls, result: SearchResult) -> SearchResultOut:
        return cls.model_validate(result, from_attributes=True)


class SearchOut(OutModel):
    """docs/architecture.md#search-routes: `{results: [{entryId, revision, title, summary, score}], hidden}`."""

    results: list[SearchResultOut]
    hidden: int
    """How many better ranked entries were left out because a cited source is gone, expired, purged, forgotten or
    not visible to the caller (the next best took their place while the workspace held more)."""

    @classmethod
    def of(cls, found: Found) -> Self:
        return cls(results=[SearchResultOut.of(r) for r in found.results], hidden=found.hidden)


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


class AgentSearchOut(SearchOut, Untrusted):
    """Search results as an agent is handed them (`search_memory`): marked untrusted, never evidence."""
