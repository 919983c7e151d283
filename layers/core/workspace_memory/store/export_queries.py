"""What an export reads (docs/data-model.md, the export routes): the export and its chunks, and, of the workspace,
every kind of item an archive holds. Records only: what goes into the archive is the export's business."""

from __future__ import annotations

from collections.abc import Iterator

from workspace_memory.store import keys
from workspace_memory.store.entry_records import EntryRecord
from workspace_memory.store.export_records import ExportChunk, ExportRecord
from workspace_memory.store.paging import get_all, query_all
from workspace_memory.store.ports import Table
from workspace_memory.store.turn_records import NotesRecord, RecallReceiptRecord
from workspace_memory.store.workspace_records import KeyRevocationRecord, KeySessionRecord, MemberRecord

INDEX_PAGE = 1_000
"""Keys per read of the `ByWorkspace` index (items outside the partition), as an export pages through it to
find a member's conversations."""


def export(table: Table, workspace_id: str, export_id: str) -> ExportRecord | None:
    return ExportRecord.of(table.get(*keys.export(workspace_id, export_id)))


def chunks(table: Table, workspace_id: str, export_id: str) -> list[ExportChunk]:
    """Every chunk of the export's files, by file then chunk number."""
    items = query_all(table, keys.ws(workspace_id), keys.export_parts_prefix(export_id), page_size=50)
    return [ExportChunk.from_item(item) for item in items]


def entry_revisions(table: Table, workspace_id: str) -> Iterator[EntryRecord]:
    """Every stored revision of every chain (expired ones included: the caller judges)."""
    for item in query_all(table, keys.ws(workspace_id), keys.ENTRY_REVISION_PREFIX, page_size=200):
        yield EntryRecord.from_item(item)


def notes(table: Table, workspace_id: str, user_id: str) -> Iterator[tuple[str, NotesRecord]]:
    """The user's notebooks in the workspace, with their session ids."""
    prefix = f"{keys.NOTES_PREFIX}{user_id}#"
    for item in query_all(table, keys.ws(workspace_id), prefix, page_size=100):
        record = NotesRecord.of(item)
        if record is not None:
            yield str(item["sk"]).removeprefix(prefix), record


def key_sessions(table: Table, workspace_id: str) -> Iterator[KeySessionRecord]:
    for item in query_all(table, keys.ws(workspace_id), keys.KEY_SESSION_PREFIX, page_size=100):
        yield KeySessionRecord.from_item(item)


def revocation(table: Table, workspace_id: str, session_id: str) -> KeyRevocationRecord | None:
    item = table.get(*keys.key_revocation(workspace_id, session_id))
    return None if item is None else KeyRevocationRecord.from_item(item)


def members(table: Table, workspace_id: str) -> Iterator[MemberRecord]:
    for item in query_all(table, keys.ws(workspace_id), keys.MEMBER_PREFIX, page_size=100):
        yield MemberRecord.from_item(item)


def workspace_index(table: Table, workspace_id: str, page_size: int = INDEX_PAGE) -> Iterator[tuple[str, str]]:
    """Every key the `ByWorkspace` index holds for the workspace, page after page until a page comes back empty
    (a page may hold fewer than asked: DynamoDB stops a Query at 1 MB)."""
    after: tuple[str, str] | None = None
    while page := table.workspace_keys(workspace_id, page_size, after):
        yield from page
        after = page[-1]


def conversations_of(table: Table, workspace_id: str, user_id: str) -> list[str]:
    """The conversations of the workspace whose owner is `user_id`: their `OWNER` items, found through the
    `ByWorkspace` index (eventually consistent: a conversation begun a moment ago may be missing), then read
    consistently, 100 to a read."""
    found = sorted(pk for pk, sk in workspace_index(table, workspace_id) if sk == "OWNER" and pk.startswith("CONV#"))
    convs = [pk.removeprefix("CONV#") for pk in found]
    items = get_all(table, [keys.conversation_owner(conv) for conv in convs])
    return [
        conv
        for conv, item in zip(convs, items, strict=True)
        if item is not None and item.get("userId") == user_id and item.get("workspaceId") == workspace_id
    ]


def receipts(table: Table, conversation_id: str) -> Iterator[RecallReceiptRecord]:
    for item in query_all(table, keys.conv(conversation_id), keys.RECEIPT_PREFIX, page_size=200):
        yield RecallReceiptRecord.from_item(item)
