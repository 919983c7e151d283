"""Paging through a listing to its end: every item of one partition under a sort-key prefix, page by page; and
reading any number of items by key, a consistent read of 100 at a time."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from workspace_memory.store.ports import Item, Table

GET_MANY_LIMIT = 100
"""The most keys one consistent read takes (TransactGetItems' limit)."""


def get_all(table: Table, wanted: Sequence[tuple[str, str]]) -> list[Item | None]:
    """The items at `wanted`, in order (None where absent): one consistent read per 100 keys, so each hundred is a
    snapshot and the whole is not."""
    found: list[Item | None] = []
    for start in range(0, len(wanted), GET_MANY_LIMIT):
        found.extend(table.get_many(wanted[start : start + GET_MANY_LIMIT]))
    return found


def query_all(
    table: Table,
    pk: str,
    sk_prefix: str,
    *,
    page_size: int,
    newest_first: bool = False,
    attributes: Sequence[str] | None = None,
    start_after: str | None = None,
) -> Iterator[Item]:
    """Every item of the partition `pk` whose sort key starts with `sk_prefix` (after the sort key `start_after`,
    when given: a cursor's), in sort-key order (oldest first unless `newest_first`), `page_size` to a Query,
    each page read only when the one before is used up: a caller that stops early reads no more pages.

    A page may come back short when DynamoDB's 1 MB page limit cuts it (it counts the items as stored, before
    `attributes` projects them), so a short page is NOT the last one: only an empty page ends the listing."""
    while page := table.query(
        pk, sk_prefix, limit=page_size, newest_first=newest_first, start_after=start_after, attributes=attributes
    ):
        start_after = page[-1]["sk"]
        yield from page
