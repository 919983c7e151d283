"""Reading entry items: by key, and paging through a prefix. A pager yields each record with its position
(its sort key: what a page cursor encodes, and where the next page starts)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

from workspace_memory.store import keys
from workspace_memory.store.cursors import query_page
from workspace_memory.store.entry_records import CandidateRecord, EntryHead, EntryRecord, head_from_item, head_of
from workspace_memory.store.paging import get_all, query_all
from workspace_memory.store.ports import Item, Table


def entry_head(table: Table, workspace_id: str, entry_id: str) -> EntryHead | None:
    return head_of(table.get(*keys.entry(workspace_id, entry_id)))


def read_counts(table: Table, workspace_id: str, entry_ids: Sequence[str]) -> dict[str, int]:
    """The advisory read counts of some chains' heads (a missing, forgotten or never-read chain: 0), 100 heads
    per consistent read."""
    counts: dict[str, int] = {}
    for entry_id, item in zip(entry_ids, get_all(table, [keys.entry(workspace_id, e) for e in entry_ids]), strict=True):
        head = head_of(item)
        counts[entry_id] = head.read_count or 0 if isinstance(head, EntryRecord) else 0
    return counts


def entry_revision(table: Table, workspace_id: str, entry_id: str, revision: int) -> EntryRecord | None:
    item = table.get(*keys.entry_revision(workspace_id, entry_id, revision))
    return None if item is None else EntryRecord.from_item(item)


def key_holder(table: Table, workspace_id: str, slot: str) -> str | None:
    """The chain holding the key slot, if any."""
    item = table.get(*keys.entry_key(workspace_id, slot))
    return None if item is None else str(item["entryId"])


def key_secret(table: Table, workspace_id: str) -> bytes | None:
    """The workspace's sealed HMAC secret, if it was made."""
    item = table.get(*keys.entry_secret(workspace_id))
    return None if item is None else bytes(item["ciphertext"])


def entry_heads(
    table: Table, workspace_id: str, *, after: str | None = None, page: int = 100
) -> Iterator[tuple[str, EntryHead]]:
    """Every head of the workspace after position `after` (forgotten ones included), in entry id order."""
    for position, item in _items(table, workspace_id, keys.ENTRY_PREFIX, after, page, newest_first=False):
        yield position, head_from_item(item)


def entry_revisions(
    table: Table, workspace_id: str, entry_id: str, *, page: int = 100, newest_first: bool = False
) -> Iterator[EntryRecord]:
    """Every stored revision of a chain, oldest first (expired ones included: the caller judges)."""
    prefix = keys.entry_revisions_prefix(entry_id)
    for _, item in _items(table, workspace_id, prefix, None, page, newest_first=newest_first):
        yield EntryRecord.from_item(item)


def all_revisions(table: Table, workspace_id: str, *, page: int = 100) -> Iterator[EntryRecord]:
    """Every stored revision of every chain of the workspace (expired ones included: the caller judges)."""
    for _, item in _items(table, workspace_id, keys.ENTRY_REVISION_PREFIX, None, page, newest_first=False):
        yield EntryRecord.from_item(item)


def candidates(table: Table, workspace_id: str, *, after: str | None = None) -> Iterator[tuple[str, CandidateRecord]]:
    """Every stored candidate of the workspace after position `after` (decided and expired ones included)."""
    for position, item in _items(table, workspace_id, keys.CANDIDATE_PREFIX, after, 100, newest_first=False):
        yield position, CandidateRecord.from_item(item)


def entry_revision_page(
    table: Table, workspace_id: str, entry_id: str, *, limit: int, cursor: str | None
) -> tuple[list[EntryRecord], str | None]:
    """Up to `limit` revisions of a chain, newest first, resuming after `cursor`, and the next page's cursor."""
    prefix = keys.entry_revisions_prefix(entry_id)
    items, next_cursor = query_page(table, keys.ws(workspace_id), prefix, limit=limit, cursor=cursor, newest_first=True)
    return [EntryRecord.from_item(item) for item in items], next_cursor


def _items(
    table: Table, workspace_id: str, prefix: str, after: str | None, page: int, *, newest_first: bool
) -> Iterator[tuple[str, Item]]:
    pages = query_all(
        table, keys.ws(workspace_id), prefix, page_size=page, newest_first=newest_first, start_after=after
    )
    for item in pages:
        yield item["sk"], item


@dataclass(frozen=True)
class AgentWindow:
    """The agent writes one key session's window holds: write id → epoch milliseconds."""

    writes: Mapping[str, int]

    def since(self, start_ms: int) -> list[int]:
        """The times of the writes after `start_ms` (those that count), oldest first."""
        return sorted(at for at in self.writes.values() if at > start_ms)

    def until(self, start_ms: int) -> tuple[str, ...]:
        """The ids of the writes at or before `start_ms` (out of the window: to trim)."""
        return tuple(sorted(write_id for write_id, at in self.writes.items() if at <= start_ms))


def agent_window(table: Table, workspace_id: str, user_id: str, holder: str) -> AgentWindow | None:
    """The rolling window of one key session's agent writes, if it is open."""
    item = table.get(*keys.agent_rate(workspace_id, user_id, holder))
    if item is None:
        return None
    return AgentWindow({str(k): int(v) for k, v in dict(item.get("window") or {}).items()})
