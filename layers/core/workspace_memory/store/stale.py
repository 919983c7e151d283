"""What a lost compare-and-set answers, from the cancelled transaction's own view.

The current value a 409 names (`currentVersion`, `currentRevision`) is the item the refused condition was
judged against (`TransactionCancelled.seen`), never a read made after the transaction: by then a concurrent
writer may have moved it on, up to the very base the caller sent ("base 8 is not current, currentVersion
8"). An item that did not exist is the absent value: version 0 for a document never saved.
"""

from __future__ import annotations

from workspace_memory.kernel.errors import (
    Conflict,
    EntryForgotten,
    EntryPinned,
    StaleBaseVersion,
    StaleRevision,
    WorkspaceNotFound,
)
from workspace_memory.kernel.terms import EntryStatus
from workspace_memory.store import keys
from workspace_memory.store.head import Head
from workspace_memory.store.ports import TransactionCancelled


def stale_base(refusal: TransactionCancelled, workspace_id: str, base: int) -> Exception:
    """A refused head move: 409 with the head the transaction saw, or, for a deleted workspace's tombstone,
    the 404 every route gives. A head that did not refuse (another change of the version failed alone) has
    no current value to name: a plain conflict."""
    key = keys.head(workspace_id)
    if not refusal.saw(key):
        return Conflict("the document changed concurrently; try again")
    head = Head.from_item(refusal.seen(key))
    if head.tombstone:
        return WorkspaceNotFound("workspace not found")
    return StaleBaseVersion(f"base version {base} is not the current version", current_version=head.version)


def stale_entry(refusal: TransactionCancelled, workspace_id: str, entry_id: str) -> Exception | None:
    """A refused entry-head move: 409 with the revision the transaction saw, 410 for a forgotten chain (or one
    already purged: no head at all). None when the head did not refuse."""
    key = keys.entry(workspace_id, entry_id)
    if not refusal.saw(key):
        return None
    head = refusal.seen(key)
    if head is None or head["status"] != EntryStatus.ACTIVE.value:
        return EntryForgotten("entry was forgotten")
    return StaleRevision("the entry changed concurrently", current_revision=int(head["revision"]))


def pinned_entry(refusal: TransactionCancelled, workspace_id: str, entry_id: str) -> EntryPinned | None:
    """An agent's refused head move whose head, as the transaction judged it, is live and pinned: the pin
    (landed meanwhile) refused it. None otherwise (the stale revision or the forget is answered instead)."""
    key = keys.entry(workspace_id, entry_id)
    head = refusal.seen(key) if refusal.saw(key) else None
    if head is None or head["status"] != EntryStatus.ACTIVE.value or head.get("pinned") is not True:
        return None
    return EntryPinned("the entry is pinned: agents may read it, not write over it")
