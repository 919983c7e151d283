"""An entry head's advisory read count (`readCount`, `lastReadAt`), bumped off a read's critical path."""

from __future__ import annotations

import contextlib
from concurrent.futures import Future, ThreadPoolExecutor

from workspace_memory.kernel.clock import Clock, iso
from workspace_memory.kernel.errors import DomainError
from workspace_memory.store.changes import CountEntryRead
from workspace_memory.store.ports import Table, TransactionCancelled


class ReadCounts:
    def __init__(self, table: Table, clock: Clock) -> None:
        self._table = table
        self._clock = clock
        self._counter: ThreadPoolExecutor | None = None
        self._bumps: list[Future[None]] = []

    def count(self, workspace_id: str, entry_id: str) -> None:
        """Bump the head's `readCount`/`lastReadAt` on a background thread: the read answers without waiting
        for it, and a failed bump is dropped (counts are advisory). In Lambda a bump still pending when the
        invocation returns runs when the environment thaws for the next one, or is lost with it."""
        if self._counter is None:
            self._counter = ThreadPoolExecutor(max_workers=1, thread_name_prefix="entry-reads")
        change = CountEntryRead(workspace_id, entry_id, iso(self._clock.now()))
        self._bumps = [f for f in self._bumps if not f.done()]
        self._bumps.append(self._counter.submit(self._bump, change))

    def _bump(self, change: CountEntryRead) -> None:
        # forgotten meanwhile, or the store is busy: the count is advisory
        with contextlib.suppress(TransactionCancelled, DomainError):
            self._table.transact([change])

    def flush(self) -> None:
        """Wait for the pending read-count bumps (tests; a graceful shutdown)."""
        for future in self._bumps:
            future.result()
        self._bumps = []
