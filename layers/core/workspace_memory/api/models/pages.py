"""What the page routes answer (docs/architecture.md#pages): a page with its entries, a list line, the
workspace's categories. Titles, notes and summaries are opened for the caller; never stored in clear."""

from __future__ import annotations

from typing import TYPE_CHECKING

from workspace_memory.api.models.base import OutModel, omitted_when_none
from workspace_memory.kernel.terms import PageScope

if TYPE_CHECKING:  # the domain objects the models are built `of`: not imported at a handler's cold start
    from workspace_memory.pages.model import Categories, PageList, PageView
    from workspace_memory.store.page_records import PageRecord


class SummarySourceOut(OutModel):
    entry_id: str
    revision: int


class PageEntryOut(OutModel):
    """A live entry filed in the page, at its current revision."""

    entry_id: str
    revision: int
    title: str
    summary: str


class PageOut(OutModel):
    page_id: str
    revision: int
    scope: PageScope
    owner: str | None = omitted_when_none()
    """A private page's member (left out for a workspace page)."""
    category: str
    title: str
    notes: str | None = omitted_when_none()
    summary: str | None = omitted_when_none()
    """Derived from the filed entries by consolidation; left out until one is set."""
    summarized_from: list[SummarySourceOut]
    summary_stale: bool
    """True when the filed entries' current revisions are not the ones the summary was made from, or when
    entries are filed and there is no summary (judged on this read)."""
    entries: list[PageEntryOut]
    created_at: str
    updated_at: str

    @classmethod
    def of(cls, view: PageView) -> PageOut:
        return cls(
            page_id=view.page_id,
            revision=view.revision,
            scope=view.scope,
            owner=view.owner,
            category=view.category,
            title=view.title,
            notes=view.notes,
            summary=view.summary,
            summarized_from=[SummarySourceOut(entry_id=e, revision=r) for e, r in view.summarized_from],
            summary_stale=view.summary_stale,
            entries=[PageEntryOut.model_validate(row, from_attributes=True) for row in view.entries],
            created_at=view.created_at,
            updated_at=view.updated_at,
        )


class PageLineOut(OutModel):
    page_id: str
    revision: int
    scope: PageScope
    category: str
    title: str
    summary_stale: bool
    entry_count: int


class PagesOut(OutModel):
    pages: list[PageLineOut]
    next_cursor: str | None = omitted_when_none()
    categories: list[str]
    """Every category a page may have now: the built-in ones (`you`, `topic`, `area`, `people`), then the
    owner's."""

    @classmethod
    def of(cls, found: PageList) -> PagesOut:
        lines = [PageLineOut.model_validate(line, from_attributes=True) for line in found.pages]
        return cls(pages=lines, next_cursor=found.next_cursor, categories=list(found.categories))


class PageWritten(OutModel):
    page_id: str
    revision: int

    @classmethod
    def of(cls, page: PageRecord) -> PageWritten:
        return cls(page_id=page.page_id, revision=page.revision)


class PageCategoriesOut(OutModel):
    categories: list[str]
    """The owner's extra categories (the built-in ones are always there)."""
    revision: int

    @classmethod
    def of(cls, found: Categories) -> PageCategoriesOut:
        return cls(categories=list(found.extra), revision=found.revision)
