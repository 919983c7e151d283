"""`store.paging.query_all` over the in-memory table: the whole listing in order, a page at a time, and only
an empty page ends it (DynamoDB's 1 MB limit returns short pages before the last)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.memory_table import MemoryTable
from workspace_memory.store.export_queries import workspace_index
from workspace_memory.store.paging import query_all
from workspace_memory.store.ports import Item

pytestmark = pytest.mark.unit

PK = "WS#w"


class ShortPages(MemoryTable):
    """A table whose pages hold at most two items whatever the limit, as the 1 MB page limit cuts them."""

    def query(self, pk: str, sk_prefix: str, **options: Any) -> list[Item]:
        return super().query(pk, sk_prefix, **options)[:2]


def table_of(table: MemoryTable, count: int) -> MemoryTable:
    for n in range(count):
        table.put({"pk": PK, "sk": f"V#{n:03d}", "n": n, "body": "x"})
    table.put({"pk": PK, "sk": "W#000"})  # another listing of the partition
    table.put({"pk": "WS#other", "sk": "V#000"})  # another partition
    table.reads = 0
    return table


def sort_keys(items: list[Item]) -> list[str]:
    return [item["sk"] for item in items]


def test_every_item_of_the_listing_in_order_and_one_empty_page_ends_it() -> None:
    table = table_of(MemoryTable(), 5)
    assert sort_keys(list(query_all(table, PK, "V#", page_size=2))) == [f"V#{n:03d}" for n in range(5)]
    assert table.reads == 4  # pages of 2, 2 and 1, then the empty one that ends it
    newest_first = sort_keys(list(query_all(table, PK, "V#", page_size=2, newest_first=True)))
    assert newest_first == [f"V#{n:03d}" for n in reversed(range(5))]


def test_a_short_page_is_not_the_last() -> None:
    table = table_of(ShortPages(), 5)
    assert len(list(query_all(table, PK, "V#", page_size=100))) == 5
    assert table.reads == 4  # 2 + 2 + 1, then the empty page


def test_it_resumes_after_a_sort_key_projects_and_reads_no_page_it_is_not_asked_for() -> None:
    table = table_of(MemoryTable(), 5)
    listing = query_all(table, PK, "V#", page_size=2, start_after="V#001", attributes=("n",))
    assert table.reads == 0
    assert next(listing) == {"pk": PK, "sk": "V#002", "n": 2}
    assert next(listing)["sk"] == "V#003"
    assert table.reads == 1


class ShortIndexPages(MemoryTable):
    """A table whose `ByWorkspace` pages hold at most three keys whatever the limit (the 1 MB cut)."""

    def workspace_keys(
        self, workspace_id: str, limit: int, start_after: tuple[str, str] | None = None
    ) -> list[tuple[str, str]]:
        return super().workspace_keys(workspace_id, limit, start_after)[:3]


def test_the_workspace_index_is_read_whole_through_short_pages() -> None:
    table = ShortIndexPages()
    named = [(f"CONV#{n:03d}", "OWNER") for n in range(10)]
    for pk, sk in named:
        table.put({"pk": pk, "sk": sk, "workspaceId": "w"})
    table.put({"pk": "CONV#other", "sk": "OWNER", "workspaceId": "x"})
    assert list(workspace_index(table, "w", page_size=5)) == named
