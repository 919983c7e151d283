"""Retention (docs/architecture.md#retention): how long a version is kept after it stopped being the head.

A workspace's `historyDays` (1-365, default 90) lives on its item. A version expires `historyDays` after the
next version was made: the transaction that supersedes it stamps its `ttl` (DynamoDB's TTL attribute) and
`supersededAt`, under a condition that the retention it used is still the workspace's. Changing the retention
applies to the versions already superseded too: after the workspace item changes, every retained non-head
version's `ttl` is rewritten, in transactions that check the retention is still the one being applied. The
head's version never expires, so compare-and-set keeps resting on the head's condition (docs/architecture.md#retention).

Superseded memory entry revisions follow the same retention (docs/architecture.md#retention): the same pass rewrites
their `ttl` (`supersededAt + historyDays`) in the same batches. It is bounded by the entry version cap (5,000 per
workspace), so at most ~100 transactions of 50 beside the document's versions.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator

from workspace_memory.document.commit import expiry
from workspace_memory.kernel.clock import Clock
from workspace_memory.kernel.errors import Forbidden, InvalidInput, Unavailable, WorkspaceNotFound
from workspace_memory.kernel.terms import EntryStatus
from workspace_memory.search import search_snapshot
from workspace_memory.store import document_queries
from workspace_memory.store.changes import (
    BumpEntriesRevision,
    Change,
    ExpireEntryRevision,
    ExpireVersion,
    Label,
    RetentionIs,
    SetRetention,
)
from workspace_memory.store.ports import Table, TransactionCancelled
from workspace_memory.workspaces.access import load_caller

MIN_HISTORY_DAYS = 1
MAX_HISTORY_DAYS = 365

REWRITE_BATCH = 50
"""Versions per rewrite transaction (plus the retention check): well under DynamoDB's 100 actions."""

REWRITE_ATTEMPTS = 3


class RetentionService:
    def __init__(self, table: Table, clock: Clock) -> None:
        self._table = table
        self._clock = clock

    def get(self, user_id: str, workspace_id: str) -> int:
        caller, _ = load_caller(self._table, workspace_id, user_id)
        return caller.workspace.history_days

    def set(self, user_id: str, workspace_id: str, history_days: int) -> int:
        """The owner sets the retention; then every version already superseded gets the expiry it implies."""
        if not MIN_HISTORY_DAYS <= history_days <= MAX_HISTORY_DAYS:
            raise InvalidInput(f"historyDays must be between {MIN_HISTORY_DAYS} and {MAX_HISTORY_DAYS}")
        caller, _ = load_caller(self._table, workspace_id, user_id)
        caller.require_owner()
        try:
            self._table.transact([SetRetention(workspace_id, history_days), caller.still_owner()])
        except TransactionCancelled as exc:
            if Label.ACCESS in exc.failed():
                raise Forbidden("only the workspace owner may do this") from None
            raise WorkspaceNotFound("workspace not found") from None
        self.apply(workspace_id, history_days)
        return history_days

    def apply(self, workspace_id: str, history_days: int) -> None:
        """Bring every retained non-head version's expiry in step with `history_days`. Idempotent; stops quietly
        when a newer retention replaced this one (that change applies itself the same way)."""
        for _ in range(REWRITE_ATTEMPTS):
            try:
                self._rewrite(workspace_id, history_days)
                return
            except TransactionCancelled as exc:
                if Label.RETENTION in exc.failed():
                    return
                # A version expired or vanished between the read and the write: read again.
        raise Unavailable("the history kept changing while its retention was applied; retry", transient=True)

    def _rewrite(self, workspace_id: str, history_days: int) -> None:
        pending: list[Change] = []
        superseded: list[bool] = []
        changes: Iterator[Change] = itertools.chain(
            self._expiries(workspace_id, history_days), self._entry_expiries(workspace_id, history_days, superseded)
        )
        for change in changes:
            pending.append(change)
            if len(pending) == REWRITE_BATCH:
                self._table.transact([*pending, RetentionIs(workspace_id, history_days)])
                pending = []
        if pending:
            self._table.transact([*pending, RetentionIs(workspace_id, history_days)])
        if superseded:
            self._refresh_search(workspace_id, history_days)

    def _refresh_search(self, workspace_id: str, history_days: int) -> None:
        """Search must not keep what the new expiries ended (docs/decisions/0056): `entriesRevision` moves on,
        so every warm index rebuilds from the revisions' metadata (expired ones left out) and a snapshot built
        at the old revision can no longer be stored; then every stored snapshot, whose `ttl` was judged
        against the old expiries, is expired (the retention's role may not delete: TTL removes them)."""
        self._table.transact([BumpEntriesRevision(workspace_id), RetentionIs(workspace_id, history_days)])
        search_snapshot.expire(self._table, workspace_id, self._clock.now())

    def _expiries(self, workspace_id: str, history_days: int) -> Iterator[ExpireVersion]:
        """The expiry each retained non-head version should have and does not have yet."""
        now = self._clock.now()
        # Read after the retention was written: a version superseded since then got the new expiry from its own
        # transaction (whose retention check failed on the old value and was retried with the new one).
        head_version = document_queries.head(self._table, workspace_id).version
        versions = document_queries.versions(self._table, workspace_id)
        found = next(versions, None)
        while found is not None:
            successor = next(versions, None)
            # Versions written before retention existed carry no `supersededAt`: their successor's creation
            # time is when they stopped being the head.
            superseded_at = found.superseded_at or (None if successor is None else successor.created_at)
            if found.version < head_version and superseded_at is not None and not found.expired(now):
                ttl = expiry(superseded_at, history_days)
                if found.ttl != ttl or found.superseded_at is None:
                    yield ExpireVersion(workspace_id, found.version, ttl, superseded_at, int(now))
            found = successor

    def _entry_expiries(
        self, workspace_id: str, history_days: int, superseded: list[bool]
    ) -> Iterator[ExpireEntryRevision]:
        """The expiry each retained superseded entry revision should have and does not have yet (read after the
        retention was written, as the versions are: a revision superseded since carries the new value).
        `superseded` gains an element when there is any such revision, rewritten or not (search may hold it)."""
        now = self._clock.now()
        for revision in document_queries.revision_expiries(self._table, workspace_id):
            superseded_at = revision.superseded_at
            if revision.status is not EntryStatus.SUPERSEDED or superseded_at is None or revision.expired(now):
                continue
            superseded.append(True)
            ttl = expiry(superseded_at, history_days)
            if revision.ttl != ttl:
                yield ExpireEntryRevision(workspace_id, revision.entry_id, revision.revision, ttl, int(now))
