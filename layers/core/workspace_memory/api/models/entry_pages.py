"""A page of the entry list (docs/architecture.md#entries): its rows and, on the first page, recall's budgets;
apart from the entry's own models, so a function that only reads or searches entries does not build them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, Self

from workspace_memory.api.models.base import OutModel, Untrusted, omitted_when_none
from workspace_memory.kernel.terms import (
    CitationState,
    EntryScope,
    EntryStatus,
    EntryType,
)

if TYPE_CHECKING:  # the domain objects the models are built `of`: not imported at a handler's cold start
    from workspace_memory.entries.index import Budget
    from workspace_memory.entries.model import EntryRow, Page


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
    verified_evidence: int | None = omitted_when_none()
    """Set when an agent of `verifiedBy` verified it: how many cited sources it re-checked (a person: omitted)."""
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


class AgentEntriesOut(EntriesOut, Untrusted):
    """A list as an agent is handed it: marked untrusted, never evidence."""
