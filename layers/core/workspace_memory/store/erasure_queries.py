"""The reads of a member's erasure: a page of the workspace's partition, a page of the items elsewhere that
name the workspace (`ByWorkspace`), a conversation's items, the erasures still running."""

from __future__ import annotations

from collections.abc import Iterator

from workspace_memory.store import keys
from workspace_memory.store.erasure_records import RUNNING, ErasureRecord
from workspace_memory.store.paging import query_all
from workspace_memory.store.ports import Item, Table

CONVERSATION_OWNER = "OWNER"


def partition_page(table: Table, workspace_id: str, after: str | None, limit: int) -> list[Item]:
    """Up to `limit` items of the workspace's own partition after the sort key `after` (consistent)."""
    return table.query(keys.ws(workspace_id), "", limit=limit, newest_first=False, start_after=after)


def named_elsewhere(table: Table, workspace_id: str, after: keys.Key | None, limit: int) -> list[keys.Key]:
    """Keys of up to `limit` items outside the partition that name the workspace (conversations, admissions)."""
    return table.workspace_keys(workspace_id, limit, after)


def conversation_items(table: Table, pk: str) -> Iterator[Item]:
    """Every item of one conversation's partition (`CONV#{id}`)."""
    return query_all(table, pk, "", page_size=100)


def is_conversation(pk: str) -> bool:
    return pk.startswith("CONV#")


def members_conversation(table: Table, pk: str, subject: str) -> tuple[Item, list[Item]] | None:
    """The conversation's owner record and its other items, if `subject` owns the conversation."""
    owner = table.get(pk, CONVERSATION_OWNER)
    if owner is None or owner.get("userId") != subject:
        return None
    return owner, [item for item in conversation_items(table, pk) if item["sk"] != CONVERSATION_OWNER]


def admissions_of(table: Table, found: list[keys.Key], subject: str) -> list[Item]:
    """Of the items at `found` (outside conversations), those that name `subject` as their user: admissions."""
    return [item for item in table.get_many(found) if item is not None and item.get("userId") == subject]


def turns_of(table: Table, found: list[keys.Key], subject: str) -> list[str]:
    """The turn (workflow) ids of `subject`'s admissions among the items at `found`, sorted, each once."""
    return sorted({str(item["turnId"]) for item in admissions_of(table, found, subject) if item.get("turnId")})


def running_erasures(table: Table, workspace_id: str) -> Iterator[ErasureRecord]:
    """The workspace's erasures that have not written their receipt yet."""
    for item in query_all(table, keys.ws(workspace_id), keys.ERASURE_PREFIX, page_size=100):
        record = ErasureRecord.of(item)
        if record is not None and record.status == RUNNING:
            yield record
