"""The pages context's model (docs/architecture.md#pages): what a page shows, its categories, and the
encryption contexts of its sealed parts. A page groups entries about one subject; the entries stay the source
of truth, a page's summary is derived from them and its staleness is judged on every read."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from workspace_memory.kernel.terms import PageScope

BUILT_IN_CATEGORIES = ("you", "topic", "area", "people")
MAX_EXTRA_CATEGORIES = 20
CATEGORY = re.compile(r"[a-z][a-z0-9-]{0,31}")
MAX_PAGE_ENTRIES = 40
"""Filings per page: deleting a page removes its filings in the same transaction (DynamoDB's 100 items)."""
TITLE_MAX_CHARS = 200
NOTES_MAX_CHARS = 20_000
SUMMARY_MAX_CHARS = 8_000


def page_context(workspace_id: str, page_id: str, part: str) -> dict[str, str]:
    """One sealed part of a page (`title`, `notes`, `summary`): its own kind, so no part reads as another."""
    return {"workspace": workspace_id, "kind": f"page-{part}", "page": page_id}


def summary_stale(filed: Iterable[tuple[str, int]], summarized_from: Iterable[tuple[str, int]], summary: bool) -> bool:
    """A summary is stale when the filed entries' current revisions are not the ones it was made from, or when
    entries are filed and there is none: judged from what is stored, so no entry write needs to say so."""
    current = set(filed)
    if not summary:
        return bool(current)
    return current != set(summarized_from)


@dataclass(frozen=True)
class PageEntryRow:
    """A live entry filed in the page, as its current revision says."""

    entry_id: str
    revision: int
    title: str
    summary: str


@dataclass(frozen=True)
class PageView:
    page_id: str
    revision: int
    scope: PageScope
    owner: str | None
    """The member a private page belongs to (None: a workspace page)."""
    category: str
    title: str
    notes: str | None
    summary: str | None
    summarized_from: tuple[tuple[str, int], ...]
    summary_stale: bool
    entries: tuple[PageEntryRow, ...]
    created_at: str
    updated_at: str


@dataclass(frozen=True)
class PageLine:
    """A line of the list: no notes, no entries' text."""

    page_id: str
    revision: int
    scope: PageScope
    category: str
    title: str
    summary_stale: bool
    entry_count: int


@dataclass(frozen=True)
class PageList:
    pages: list[PageLine]
    next_cursor: str | None
    categories: tuple[str, ...]
    """Every category a page may have now: the built-in ones, then the owner's."""


@dataclass(frozen=True)
class PageChanges:
    """What an edit sets (None: left as it is); notes `""` removes them."""

    title: str | None = None
    category: str | None = None
    notes: str | None = None


@dataclass(frozen=True)
class Categories:
    """The owner's extra categories and their revision (0: never set)."""

    extra: tuple[str, ...]
    revision: int

    @property
    def all(self) -> tuple[str, ...]:
        return BUILT_IN_CATEGORIES + self.extra
