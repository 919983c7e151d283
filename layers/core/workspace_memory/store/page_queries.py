"""Reading page items: one page, the pages of a workspace a page at a time, a page's filings, an entry's."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from workspace_memory.store import keys
from workspace_memory.store.entry_records import EntryHead, head_of
from workspace_memory.store.page_records import CategoriesRecord, Filing, PageRecord
from workspace_memory.store.paging import query_all
from workspace_memory.store.ports import Table


def page(table: Table, workspace_id: str, page_id: str) -> PageRecord | None:
    return PageRecord.of(table.get(*keys.page(workspace_id, page_id)))


def pages(table: Table, workspace_id: str, *, after: str | None = None) -> Iterator[tuple[str, PageRecord]]:
    """Every page of the workspace after position `after` (a sort key), in page id order."""
    for item in query_all(table, keys.ws(workspace_id), keys.PAGE_PREFIX, page_size=100, start_after=after):
        yield str(item["sk"]), PageRecord.from_item(item)


def filings(table: Table, workspace_id: str, page_id: str) -> list[Filing]:
    """The entries filed in a page, in entry id order."""
    prefix = keys.page_entries_prefix(page_id)
    found = query_all(table, keys.ws(workspace_id), prefix, page_size=100)
    return [filing for filing in map(Filing.of, found) if filing is not None]


def entry_filings(table: Table, workspace_id: str) -> set[str]:
    """The ids of every filed entry of the workspace (the `FILED#` items, keys only)."""
    found = query_all(table, keys.ws(workspace_id), keys.FILED_PREFIX, page_size=500, attributes=["entryId"])
    return {str(item["entryId"]) for item in found}


def filing_of(table: Table, workspace_id: str, entry_id: str) -> Filing | None:
    return Filing.of(table.get(*keys.entry_filing(workspace_id, entry_id)))


def categories(table: Table, workspace_id: str) -> CategoriesRecord:
    return CategoriesRecord.of(table.get(*keys.page_categories(workspace_id)))


def heads(table: Table, workspace_id: str, entry_ids: Sequence[str]) -> list[EntryHead | None]:
    """The entry heads of `entry_ids`, 100 to a consistent read, in their order (None: no such head)."""
    found: list[EntryHead | None] = []
    for start in range(0, len(entry_ids), 100):
        items = table.get_many([keys.entry(workspace_id, e) for e in entry_ids[start : start + 100]])
        found += [head_of(item) for item in items]
    return found
