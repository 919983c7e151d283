"""The entries side of the write-time contradiction check (docs/decisions/0087): a save is answered with the
live entries it may contradict (`possibleConflicts`, ids and revisions only). A person's write is written
anyway (a person decides); an agent's write in `auto` that has any becomes a candidate instead (never a silent
second truth). The draft's vector is made once, here, and sealed by the write that follows.

The judgement itself runs over the search index (`search.write_check`); this module knows it only by its port,
so a process without search (a script) writes unchecked (`possible_conflicts` None)."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Protocol

from workspace_memory.entries.model import Draft, PossibleConflict, SealedVector
from workspace_memory.entries.scopes import owner_of
from workspace_memory.store.ports import Item
from workspace_memory.store.search_records import entries_revision
from workspace_memory.workspaces.access import Caller
from workspace_memory.workspaces.key_binding import KeyBinding

if TYPE_CHECKING:
    from workspace_memory.search.engine import Embedder, Vector
    from workspace_memory.search.write_check import Chain


class ConflictFinder(Protocol):
    def find(
        self,
        caller: Caller,
        entries_revision: int,
        draft: Draft,
        vector: Vector,
        chain: Chain,
        *,
        shared_only: bool = False,
        within: KeyBinding | None = None,
    ) -> tuple[PossibleConflict, ...]: ...


Checked = tuple[Draft, tuple[PossibleConflict, ...] | None]
"""The draft (with its vector, made once) and what it may contradict (None: not checked)."""


class WriteCheck:
    def __init__(self, embedder: Embedder | None, finder: ConflictFinder | None = None) -> None:
        self._embedder = embedder
        self.finder = finder
        """Set once the search service is built (bootstrap): None writes unchecked."""

    def check(
        self,
        caller: Caller,
        counter: Item | None,
        draft: Draft,
        *,
        entry_id: str | None = None,
        shared_only: bool = False,
        within: KeyBinding | None = None,
    ) -> Checked:
        """`draft` judged against the live entries `caller` may see at the workspace's `entriesRevision` (from
        `counter`, read in the caller's own consistent read), the chain it revises (`entry_id`, or the one its
        key names in its scope) left out."""
        if self.finder is None or self._embedder is None:
            return draft, None
        from workspace_memory.search.engine import embedding_text, pack_vector, unpack_vector
        from workspace_memory.search.write_check import Chain

        text = draft.text
        sealed = draft.vector
        if sealed is None:
            made = self._embedder.embed([embedding_text(text.title, text.summary, text.body)])[0]
            sealed = SealedVector(self._embedder.model_id, pack_vector(made))
        vector = unpack_vector(sealed.packed)  # as the index holds the stored ones: float16
        chain = Chain(entry_id, text.key, draft.scope, owner_of(caller, draft))
        found = self.finder.find(
            caller, entries_revision(counter), draft, vector, chain, shared_only=shared_only, within=within
        )
        return replace(draft, vector=sealed), found
