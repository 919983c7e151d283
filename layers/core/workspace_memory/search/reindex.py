"""An owner's reindex of a workspace's search (docs/architecture.md#reindexing-a-workspace).

A cold process without a snapshot decrypts one message per retained revision before its first search can answer:
seconds at a thousand entries. The owner can build the snapshot ahead of that search, in steps. Each call
decrypts at most `STEP` revisions the stored snapshot does not hold yet, and seals what it holds as the snapshot
at the workspace's current `entriesRevision`, marked incomplete until nothing is missing. So a reindex survives a
dead process or a closed laptop: the next call, from any process, resumes from what is sealed. Each answer says
how far it got. Every guarantee of the snapshot holds for an incomplete one too: sealed under the branch key,
stored only while the entries are at its revision, expiring with the earliest revision it holds, and deleted by
any forget. After a forget the reindex starts over, and says so in its counts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from workspace_memory.search import search_snapshot
from workspace_memory.search.entry_search import earliest_expiry, entries_revision
from workspace_memory.store import keys
from workspace_memory.workspaces.access import load_caller

if TYPE_CHECKING:
    from workspace_memory.kernel.clock import Clock
    from workspace_memory.search.entry_search import SearchService
    from workspace_memory.store.ports import Cipher, Table

STEP = 250
"""Revisions one call decrypts at most: about a second of work on one vCPU, far inside API Gateway's 29 s."""


@dataclass(frozen=True)
class ReindexProgress:
    """How far the workspace's snapshot is: revisions it holds of those retained, how many this call decrypted,
    and whether it is complete (a search from a cold process then decrypts nothing but the snapshot)."""

    indexed: int
    total: int
    decrypted: int
    complete: bool


class Reindexer:
    def __init__(self, table: Table, cipher: Cipher, clock: Clock, search: SearchService, step: int = STEP) -> None:
        self._table = table
        self._cipher = cipher
        self._clock = clock
        self._search = search
        self._step = step

    def step(self, user_id: str, workspace_id: str) -> ReindexProgress:
        """One step of the owner's reindex (see the module docstring); a step on a complete, current snapshot
        does nothing. A step that loses a race with an entry write stores nothing and reports what was sealed
        before it: the next call starts again from there."""
        caller, (counter,) = load_caller(self._table, workspace_id, user_id, [keys.entry_counter(workspace_id)])
        caller.require_owner()
        revision = entries_revision(counter)
        now = self._clock.now()
        snapshot = search_snapshot.load(self._table, self._cipher, workspace_id, now)
        if revision == 0:
            return ReindexProgress(0, 0, 0, True)
        if snapshot is not None and snapshot.complete and snapshot.entries_revision == revision:
            # whole at this revision, and unexpired: it holds every revision retained, nothing to list
            return ReindexProgress(len(snapshot.docs), len(snapshot.docs), 0, True)
        metadata = self._search.retained(workspace_id, now)
        before = 0 if snapshot is None else len(snapshot.docs)
        held = {} if snapshot is None else {(d.entry_id, d.revision): d for d in snapshot.docs}
        docs, decrypted = self._search.assembled(workspace_id, metadata, held, self._step)
        complete = len(docs) == len(metadata)
        stored = search_snapshot.store(
            self._table,
            self._cipher,
            workspace_id,
            revision,
            docs,
            now=now,
            ttl=earliest_expiry(metadata),
            complete=complete,
        )
        if not stored:
            return ReindexProgress(min(before, len(metadata)), len(metadata), decrypted, False)
        return ReindexProgress(len(docs), len(metadata), decrypted, complete)
