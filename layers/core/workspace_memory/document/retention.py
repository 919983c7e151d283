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

The agent window (`agentDays`, 1-365, default 90) is the life of an active agent-written entry without a new
revision: its write stamps `ttl` = its time + `agentDays` on its head and revision item. Changing the window
rewrites both for every active agent memory not yet expired, the same way (docs/decisions/0066).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from workspace_memory.document.commit import expiry
from workspace_memory.entries.model import AGENT_AUTHOR, agent_expiry
from workspace_memory.kernel.clock import Clock
from workspace_memory.kernel.errors import Forbidden, InvalidInput, Unavailable, WorkspaceNotFound
from workspace_memory.kernel.terms import EntryStatus
from workspace_memory.search import search_snapshot
from workspace_memory.store import document_queries, entry_queries
from workspace_memory.store.changes import (
    BumpEntriesRevision,
    Change,
    ExpireAgentEntry,
    ExpireEntryRevision,
    ExpireVersion,
    Label,
    RetentionIs,
    SetRetention,
)
from workspace_memory.store.entry_records import EntryRecord
from workspace_memory.store.ports import Table, TransactionCancelled
from workspace_memory.workspaces.access import load_caller

MIN_HISTORY_DAYS = 1
MAX_HISTORY_DAYS = 365

REWRITE_BATCH = 50
"""Versions per rewrite transaction (plus the retention check): well under DynamoDB's 100 actions."""

REWRITE_ATTEMPTS = 3


@dataclass(frozen=True)
class Retention:
    """A workspace's two windows: superseded history (`historyDays`) and active agent memories (`agentDays`)."""

    history_days: int
    agent_days: int


class RetentionService:
    def __init__(self, table: Table, clock: Clock) -> None:
        self._table = table
        self._clock = clock

    def get(self, user_id: str, workspace_id: str) -> int:
        return self.windows(user_id, workspace_id).history_days

    def windows(self, user_id: str, workspace_id: str) -> Retention:
        caller, _ = load_caller(self._table, workspace_id, user_id)
        return Retention(caller.workspace.history_days, caller.workspace.agent_days)

    def set(self, user_id: str, workspace_id: str, history_days: int) -> int:
        """The owner sets the history retention (the agent window kept)."""
        return self.set_windows(user_id, workspace_id, history_days, None).history_days

    def set_windows(
        self, user_id: str, workspace_id: str, history_days: int | None, agent_days: int | None
    ) -> Retention:
        """The owner sets either window or both, in one write; then every version already superseded, or every
        active agent memory, gets the expiry the new value implies."""
        for name, days in (("historyDays", history_days), ("agentDays", agent_days)):
            if days is not None and not MIN_HISTORY_DAYS <= days <= MAX_HISTORY_DAYS:
                raise InvalidInput(f"{name} must be between {MIN_HISTORY_DAYS} and {MAX_HISTORY_DAYS}")
        if history_days is None and agent_days is None:
            raise InvalidInput("historyDays or agentDays is required")
        caller, _ = load_caller(self._table, workspace_id, user_id)
        caller.require_owner()
        try:
            self._table.transact([SetRetention(workspace_id, history_days, agent_days), caller.still_owner()])
        except TransactionCancelled as exc:
            if Label.ACCESS in exc.failed():
                raise Forbidden("only the workspace owner may do this") from None
            raise WorkspaceNotFound("workspace not found") from None
        now = Retention(
            caller.workspace.history_days if history_days is None else history_days,
            caller.workspace.agent_days if agent_days is None else agent_days,
        )
        if history_days is not None:
            self.apply(workspace_id, history_days)
        if agent_days is not None:
            self._retry(lambda: self._rewrite_agents(workspace_id, now))
        return now

    def apply(self, workspace_id: str, history_days: int) -> None:
        """Bring every retained non-head version's expiry in step with `history_days`. Idempotent; stops quietly
        when a newer retention replaced this one (that change applies itself the same way)."""
        self._retry(lambda: self._rewrite(workspace_id, history_days))

    def _retry(self, rewrite: Callable[[], None]) -> None:
        for _ in range(REWRITE_ATTEMPTS):
            try:
                rewrite()
                return
            except TransactionCancelled as exc:
                if Label.RETENTION in exc.failed():
                    return
                # A version expired or vanished between the read and the write: read again.
        raise Unavailable("the history kept changing while its retention was applied; retry", transient=True)

    def _rewrite_agents(self, workspace_id: str, retention: Retention) -> None:
        """Every active agent memory's expiry (head and revision item) in step with `retention.agent_days`, in
        batches that check both windows still hold; then search is refreshed as after a history change."""
        check = RetentionIs(workspace_id, retention.history_days, retention.agent_days)
        pending: list[Change] = []
        held: list[bool] = []
        for change in self._agent_expiries(workspace_id, retention.agent_days, held):
            pending.append(change)
            if len(pending) >= REWRITE_BATCH:
                self._table.transact([*pending, check])
                pending = []
        if pending:
            self._table.transact([*pending, check])
        if held:
            self._refresh_search(workspace_id, retention.history_days)

    def _agent_expiries(self, workspace_id: str, agent_days: int, held: list[bool]) -> Iterator[ExpireAgentEntry]:
        """Head and revision pairs, read after the window was written (a later write stamps the new value)."""
        now = self._clock.now()
        for _, head in entry_queries.entry_heads(self._table, workspace_id):
            if not isinstance(head, EntryRecord) or head.author_kind != AGENT_AUTHOR or head.expired(now):
                continue
            held.append(True)
            ttl = agent_expiry(head.valid_from, agent_days)
            if head.ttl != ttl:
                for on_head in (True, False):
                    yield ExpireAgentEntry(workspace_id, head.entry_id, head.revision, ttl, int(now), on_head)

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
