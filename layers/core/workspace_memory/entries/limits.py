"""The caps an entry write is held to (docs/architecture.md#caps), as the checks a transaction carries: the
workspace's stored entry versions and the agent write rate per user and clock hour."""

from __future__ import annotations

from dataclasses import dataclass

from workspace_memory.entries.model import Author
from workspace_memory.kernel.terms import EntryScope
from workspace_memory.store.changes import Change, CountAgentWrite, CountEntryVersions

ENTRY_VERSION_CAP = 5000
"""Stored entry versions per workspace for its shared entries, and per member for each member's private ones
(docs/architecture.md#caps, docs/decisions/0056): 409 `ENTRY_CAP` beyond it."""
AGENT_WRITES_PER_HOUR = 120
"""Agent entry writes (candidates included) per user and workspace and clock hour: 429 beyond it."""
HOUR = 3600


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

    def rated(self, workspace_id: str, author: Author, now: float) -> list[Change]:
        """An agent's own write counted against the hour's rate; nothing for anyone else's."""
        if not author.rated:
            return []
        bucket = int(now // HOUR)
        return [CountAgentWrite(workspace_id, author.user_id, bucket, self.agent_writes_per_hour, (bucket + 2) * HOUR)]
