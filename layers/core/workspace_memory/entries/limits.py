"""The caps an entry write is held to (docs/architecture.md#caps), as the checks a transaction carries: the
workspace's stored entry versions, and the agent writes of each key session in a rolling hour."""

from __future__ import annotations

import math
import secrets
from dataclasses import dataclass
from typing import TYPE_CHECKING

from workspace_memory.entries.model import Author
from workspace_memory.kernel.errors import Conflict, RateLimited
from workspace_memory.kernel.terms import EntryScope
from workspace_memory.store import entry_queries
from workspace_memory.store.changes import Change, CountAgentWrite, CountEntryVersions
from workspace_memory.turns.admission import AdmissionRef

if TYPE_CHECKING:
    from workspace_memory.store.entry_queries import AgentWindow
    from workspace_memory.store.ports import Table

ENTRY_VERSION_CAP = 5000
"""Stored entry versions per workspace for its shared entries, and per member for each member's private ones
(docs/architecture.md#caps, docs/decisions/0056): 409 `ENTRY_CAP` beyond it."""
AGENT_WRITES_PER_HOUR = 120
"""Agent entry writes (candidates included) per key session in any rolling hour: 429 beyond it."""
HOUR = 3600
HOUR_MS = HOUR * 1000
MAX_TRIMMED = 20
"""Aged-out writes one write removes from a full window at most (each is a condition of its update)."""
OWN_TURNS = "-"
"""The rate holder of a user's turns without a key session (a person's own chat)."""


class RateRaced(Conflict):
    """An agent write's transaction found its window changed since it was read (another write took the last
    room, or the window expired): the write is judged again, reading the window afresh. Only a write that
    keeps racing answers it (409)."""


def rate_holder(author: Author) -> str:
    """Whose window an agent write counts in: the key session its admission was granted through (its id binds
    it: `AdmissionRef`), else the user's own turns."""
    if author.admission_id is None:
        return OWN_TURNS
    return AdmissionRef.parse(author.admission_id).key_session_id or OWN_TURNS


@dataclass
class Limits:
    """One service's caps, shared by its parts (a test lowers the rate to reach it)."""

    version_cap: int = ENTRY_VERSION_CAP
    agent_writes_per_hour: int = AGENT_WRITES_PER_HOUR

    def versions(self, workspace_id: str, delta: int, scope: EntryScope, owner: str) -> CountEntryVersions:
        """`delta` more stored versions (fewer, for a forget) of a chain in `scope` owned by `owner`, iff the
        count stays under the cap: a member's private chains count against that member alone, so filling the
        cap tells nobody how many private versions anyone else holds."""
        member = owner if scope is EntryScope.MEMBER else None
        return CountEntryVersions(workspace_id, delta, self.version_cap, member)

    def rated(self, table: Table, workspace_id: str, author: Author, now: float) -> list[Change]:
        """An agent's own write counted in its key session's rolling hour (nothing for anyone else's): refused
        here, before anything is written, when the last hour already holds the limit. The count itself is the
        write transaction's condition, so concurrent writes admit exactly the limit; the window read first says
        whether this write opens it and which writes aged out of a full one, so that condition never refuses a
        write the hour has room for, and a refused write leaves the window as it was."""
        if not author.rated:
            return []
        user, holder, now_ms = author.user_id, rate_holder(author), int(now * 1000)
        window = entry_queries.agent_window(table, workspace_id, user, holder)
        trimmed: tuple[str, ...] = ()
        if window is not None and len(window.writes) >= self.agent_writes_per_hour:
            self._refuse_if_full(window, now_ms)
            trimmed = window.until(now_ms - HOUR_MS)[:MAX_TRIMMED]
        return [
            CountAgentWrite(
                workspace_id,
                user,
                holder,
                secrets.token_hex(8),
                now_ms,
                self.agent_writes_per_hour,
                int(now) + HOUR + 60,
                trimmed=trimmed,
                opens=window is None,
            )
        ]

    def _refuse_if_full(self, window: AgentWindow, now_ms: int) -> None:
        counted = window.since(now_ms - HOUR_MS)
        excess = len(counted) - self.agent_writes_per_hour
        if excess >= 0:
            frees_at = counted[excess] + HOUR_MS  # the write whose hour ends first and leaves room
            raise RateLimited(
                f"at most {self.agent_writes_per_hour} agent writes per hour and key session",
                retry_after=max(math.ceil((frees_at - now_ms) / 1000), 1),
            )
