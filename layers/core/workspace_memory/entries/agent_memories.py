"""The owner's forget of every agent memory (docs/architecture.md#agent-memories): each chain every retained
revision of which an agent wrote, of every scope and member, forgotten as `DELETE …/entries/{id}` forgets one,
and every pending candidate dismissed; judged on clear metadata alone, so nothing is decrypted.

A large workspace takes several calls: each examines at most `SWEEP_BUDGET` heads or candidates and answers
a cursor to resume after the last one (heads first, then candidates). A retried call finds what it forgot as
tombstones and what it dismissed as decided, so it changes nothing twice. A chain a person wrote any retained
revision of is left whole: forgetting it would take their text and history with it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from workspace_memory.entries.candidates import Candidates
from workspace_memory.entries.forget import EntryForgetting
from workspace_memory.entries.model import AGENT_AUTHOR
from workspace_memory.kernel.errors import InvalidInput
from workspace_memory.store import entry_queries, keys
from workspace_memory.store.cursors import decode_cursor, encode_cursor
from workspace_memory.store.entry_records import EntryHead, EntryRecord
from workspace_memory.store.ports import Table
from workspace_memory.workspaces.access import load_caller

SWEEP_BUDGET = 100
"""Heads or candidates one call examines: each forget is a few transactions, so a call stays well inside the
function's timeout whatever the workspace holds."""


@dataclass(frozen=True)
class AgentMemoriesForgotten:
    """One call's work, ids and counts only: the chains forgotten, the active chains examined and left (a
    person wrote a revision of them), the candidates dismissed, and the cursor to go on (None: all done)."""

    entry_ids: tuple[str, ...]
    left: int
    candidate_ids: tuple[str, ...]
    next_cursor: str | None


class AgentMemories:
    def __init__(self, table: Table, forgetting: EntryForgetting, candidates: Candidates) -> None:
        self._table = table
        self._forgetting = forgetting
        self._candidates = candidates

    def forget_all(self, user_id: str, workspace_id: str, cursor: str | None) -> AgentMemoriesForgotten:
        """The owner only; `cursor` from the previous call's answer (a foreign one is `INVALID_INPUT`)."""
        caller, _ = load_caller(self._table, workspace_id, user_id)
        caller.require_owner()
        after = _position(cursor)
        entry_ids: tuple[str, ...] = ()
        left = 0
        if after is None or after.startswith(keys.ENTRY_PREFIX):
            swept = self._forgetting.forget_where(
                caller, self._agent_authored(workspace_id), after=after, budget=SWEEP_BUDGET
            )
            entry_ids, left = swept.entry_ids, swept.left
            if swept.last is not None:
                return AgentMemoriesForgotten(entry_ids, left, (), encode_cursor(swept.last))
            after = None
        dismissed, last = self._candidates.dismiss_pending(caller, after=after, budget=SWEEP_BUDGET)
        return AgentMemoriesForgotten(entry_ids, left, dismissed, None if last is None else encode_cursor(last))

    def _agent_authored(self, workspace_id: str) -> Callable[[EntryHead], bool]:
        def qualifies(head: EntryHead) -> bool:
            """Every stored revision an agent's (a tombstone: only when revisions of it are left to delete)."""
            if isinstance(head, EntryRecord) and head.author_kind != AGENT_AUTHOR:
                return False  # a person wrote the current revision: no Query needed
            revisions = list(entry_queries.entry_revisions(self._table, workspace_id, head.entry_id))
            return bool(revisions) and all(r.author_kind == AGENT_AUTHOR for r in revisions)

        return qualifies


def _position(cursor: str | None) -> str | None:
    if cursor is None:
        return None
    position = decode_cursor(cursor, "ENTRY")
    if not position.startswith((keys.ENTRY_PREFIX, keys.CANDIDATE_PREFIX)):
        raise InvalidInput("cursor is not valid")
    return position
