"""The memory entries' changes: an entry's head and revisions, the cap, the agent's rate, the search snapshot."""

from __future__ import annotations

from dataclasses import dataclass

from workspace_memory.store import keys
from workspace_memory.store.changes.base import ItemWrite, Label
from workspace_memory.store.keys import Key


@dataclass(frozen=True)
class MoveEntryHead(ItemWrite):
    """Replace an entry's head by `item` iff it is at revision `base` and still `active` (a forgotten chain
    never moves again); two writers from one base: exactly one wins, so a chain never forks. With `pinned`,
    iff the head's pin is also as given: False for an agent's write (never over a pinned chain), the pin as
    read for a person's (a pin that landed meanwhile is never dropped); None judges no pin."""

    base: int
    label: str = Label.ENTRY
    pinned: bool | None = None


@dataclass(frozen=True)
class MarkEntryHead:
    """Pin (`pinned` True), unpin (False) or mark verified (`verified`: at, by) an entry's head iff it is at
    revision `base` and still `active`: a mark never lands on a revision its setter did not see. Marks are the
    head's attributes, not a revision: nothing is sealed and `entriesRevision` does not move."""

    workspace_id: str
    entry_id: str
    base: int
    pinned: bool | None = None
    verified: tuple[str, str] | None = None
    evidence: int | None = None
    """With `verified`: an agent's verification, and how many cited sources it re-checked; None for a person's
    (which removes an agent's count)."""
    label: str = Label.ENTRY

    @property
    def key(self) -> Key:
        return keys.entry(self.workspace_id, self.entry_id)


@dataclass(frozen=True)
class EntryNotPinned:
    """An entry's head is not pinned: what an agent's proposal over a chain (a save through its key, a forget)
    states in its own transaction, so a pin that lands first refuses it."""

    workspace_id: str
    entry_id: str
    label: str = Label.PINNED


@dataclass(frozen=True)
class SourceNotForgotten:
    """No forgotten chain drew on `slot` (a cited source's or a turn's HMAC) within its window: no block item,
    or one past its `ttl` at `now` that TTL has not deleted yet. What an agent's save states in its own
    transaction, so a forget that lands first refuses it (decisions/0074)."""

    workspace_id: str
    slot: str
    now: int
    label: str = Label.SOURCE_FORGOTTEN

    @property
    def key(self) -> Key:
        return keys.forgotten_source(self.workspace_id, self.slot)


@dataclass(frozen=True)
class SupersedeEntryRevision:
    """Mark revision `revision` of an entry superseded by `by` (its time and retention `ttl`) iff it exists.
    The reason is no attribute: it is sealed in revision `by`'s text (decisions/0055)."""

    workspace_id: str
    entry_id: str
    revision: int
    by: int
    at: str
    ttl: int
    label: str = Label.ENTRY


@dataclass(frozen=True)
class RetireEntryRevision:
    """Mark revision `revision` of an entry superseded by another chain, `into` (a consolidation proposal a person
    accepted), at `at` with the retention `ttl` any superseded revision gets, iff it exists and is active."""

    workspace_id: str
    entry_id: str
    revision: int
    into: str
    at: str
    ttl: int
    label: str = Label.ENTRY


@dataclass(frozen=True)
class EntryHeadIs:
    """An entry's head is at `revision` and active: the chain a retired one goes into is still the one the
    proposal read."""

    workspace_id: str
    entry_id: str
    revision: int
    label: str = Label.KEEPER


@dataclass(frozen=True)
class ExpireEntryRevision:
    """Give superseded revision `revision` of an entry the expiry `ttl` a retention change implies, iff it
    exists, is superseded and has not already expired at `now` (a longer retention never revives one)."""

    workspace_id: str
    entry_id: str
    revision: int
    ttl: int
    now: int
    label: str = Label.ENTRY


@dataclass(frozen=True)
class ExpireAgentEntry:
    """Give the active agent-written revision `revision` of an entry (its head when `head`, else its revision
    item) the expiry `ttl` an agent-window change implies, iff it is still that revision, active, an agent's,
    and has not already expired at `now` (a longer window never revives one)."""

    workspace_id: str
    entry_id: str
    revision: int
    ttl: int
    now: int
    head: bool
    label: str = Label.ENTRY

    @property
    def key(self) -> Key:
        if self.head:
            return keys.entry(self.workspace_id, self.entry_id)
        return keys.entry_revision(self.workspace_id, self.entry_id, self.revision)


@dataclass(frozen=True)
class TakeKeySlot(ItemWrite):
    """Give a key slot to a new chain iff it still names `holder`: a chain whose agent memory expired (its head
    past its `ttl`, or already deleted by TTL) holds a key no one can see, so the key is free again."""

    holder: str
    label: str = Label.ENTRY_KEY


@dataclass(frozen=True)
class CountEntryVersions:
    """Add `delta` to the workspace's stored entry versions and bump its `entriesRevision`, iff the count stays
    at most `cap` (the item is created on first use). With `member`, the count is that member's own private
    versions (`versions#{member}`), not the shared one (`versions`): no member's refusal point depends on how
    many private versions another holds (docs/decisions/0056)."""

    workspace_id: str
    delta: int
    cap: int
    member: str | None = None
    label: str = Label.ENTRY_CAP

    @property
    def attribute(self) -> str:
        """The counter attribute this change moves on the `ENTRIES` item."""
        return versions_attribute(self.member)


def versions_attribute(member: str | None) -> str:
    """The `ENTRIES` attribute counting the shared stored versions (`member` None) or one member's private ones."""
    return "versions" if member is None else f"versions#{member}"


@dataclass(frozen=True)
class BumpEntriesRevision:
    """Move the workspace's `entriesRevision` on without a write of its own: what search holds at the old one
    (warm indexes, a snapshot being stored) is stale, as after a retention change expired revisions."""

    workspace_id: str
    label: str = Label.SEARCH_SNAPSHOT


@dataclass(frozen=True)
class ExpireSearchSnapshot:
    """Give a stored search-snapshot item (pointer or chunk) the expiry `ttl` iff it still exists: unusable
    from then on (reads judge expiry themselves), deleted by DynamoDB's TTL as an expired revision is."""

    key: Key
    ttl: int
    label: str = Label.SEARCH_SNAPSHOT


@dataclass(frozen=True)
class CountAgentWrite:
    """One more agent write (`write_id`, at `at_ms`, epoch milliseconds) in the rolling window of (workspace,
    user, key session), iff the window holds fewer than `limit` writes: the window is one item whose map has a
    write per id, so concurrent writes never conflict but on the limit itself. A write that found the window
    full removes the writes that aged out of it (`trimmed`, each still there: two writers trimming the same ones
    cannot both count the room), and the first write (`opens`) creates the window iff there is none. The item
    expires (`ttl`) an hour after its last write."""

    workspace_id: str
    user_id: str
    holder: str
    write_id: str
    at_ms: int
    limit: int
    ttl: int
    trimmed: tuple[str, ...] = ()
    opens: bool = False
    label: str = Label.RATE

    @property
    def key(self) -> Key:
        return keys.agent_rate(self.workspace_id, self.user_id, self.holder)


@dataclass(frozen=True)
class CountEntryRead:
    """One more read of an active entry head (`readCount`, `lastReadAt`); a forgotten or missing one is left."""

    workspace_id: str
    entry_id: str
    at: str
    label: str = Label.ENTRY


@dataclass(frozen=True)
class EntriesRevisionIs:
    """The workspace's `entriesRevision` is still `revision` (nothing was written or forgotten since): a search
    snapshot built at that revision may be stored, never one that could hold a since-forgotten entry."""

    workspace_id: str
    revision: int
    label: str = Label.SEARCH_SNAPSHOT
