"""Reading workspace items: a page of key sessions, a conversation's owner, and the keys of a workspace's own
partition (what a purge deletes)."""

from __future__ import annotations

from workspace_memory.store import keys
from workspace_memory.store.cursors import query_page
from workspace_memory.store.ports import Table
from workspace_memory.store.workspace_records import KeySessionRecord, OwnerOf


def key_session_page(
    table: Table, workspace_id: str, *, limit: int, cursor: str | None
) -> tuple[list[KeySessionRecord], str | None]:
    """Up to `limit` key sessions of every member, newest first (ids sort by opening time), resuming after
    `cursor`, and the next page's cursor."""
    items, next_cursor = query_page(
        table, keys.ws(workspace_id), keys.KEY_SESSION_PREFIX, limit=limit, cursor=cursor, newest_first=True
    )
    return [KeySessionRecord.from_item(item) for item in items], next_cursor


def conversation_owner(table: Table, conversation_id: str) -> OwnerOf | None:
    return OwnerOf.of(table.get(*keys.conversation_owner(conversation_id)))


def open_turns(table: Table, found: list[keys.Key], cleared: set[str]) -> tuple[set[keys.Key], list[str]]:
    """Of the items at `found` (outside the partition), the admissions of turns not in `cleared` (whose
    executions may still exist): their keys, and those turn ids, sorted, each once."""
    held: set[keys.Key] = set()
    turns: set[str] = set()
    for key, item in zip(found, table.get_many(found), strict=True):
        turn = None if item is None else item.get("turnId")
        if turn and turn not in cleared:
            held.add(key)
            turns.add(str(turn))
    return held, sorted(turns)


def partition_keys(table: Table, workspace_id: str, limit: int) -> list[keys.Key]:
    """The keys of up to `limit` items of the workspace's own partition, in sort-key order (consistent)."""
    items = table.query(keys.ws(workspace_id), "", limit=limit, newest_first=False)
    return [(item["pk"], item["sk"]) for item in items]
