"""The write-time contradiction check (docs/decisions/0087): which live entries a draft may contradict.

It runs over the workspace's warm search index (the vectors are already there, sealed with each revision): the
draft's vector against the index's, among the revisions the writer may see that are current now (a superseded,
forgotten or expired revision is not in the index's current rows), the chain the draft revises left out. The
nearest few are judged by the claims rule (`claims.relation`): a duplicate or an unrelated entry is no conflict.
Nothing is decrypted that the index does not already hold, and nothing is read beyond what a search reads."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from workspace_memory.entries.model import Draft, PossibleConflict
from workspace_memory.kernel.terms import EntryScope
from workspace_memory.search.claims import Relation, Words, relation
from workspace_memory.search.entry_search import SearchFilters, SearchService, admitted
from workspace_memory.workspaces.access import Caller
from workspace_memory.workspaces.key_binding import KeyBinding

if TYPE_CHECKING:
    from workspace_memory.search.engine import Vector

NEAREST = 5
"""How many of the nearest live entries are judged: a conflict shares the draft's subject, so its vector is
among the nearest; more would judge entries the cosine floor (`claims.NEAR_COSINE`) drops anyway."""


@dataclass(frozen=True)
class Chain:
    """What the draft revises, left out of its own check: a chain by id (a revision) and the chain its key would
    supersede (a create whose key is in use), named by the key's scope and owner without a read."""

    entry_id: str | None
    key: str | None
    scope: EntryScope
    owner: str


class ConflictCheck:
    """The entries context's `ConflictFinder`, over the search service's warm indexes."""

    def __init__(self, search: SearchService) -> None:
        self._search = search

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
    ) -> tuple[PossibleConflict, ...]:
        """The live entries `caller` may see (inside `within`; with `shared_only`, the ones every member may see)
        that the claims rule finds in conflict with `draft`, by id and current revision, best first."""
        from workspace_memory.search.engine import tokenize

        index = self._search.index(caller.workspace.id, entries_revision)
        columns = index.columns
        excluded = frozenset() if chain.entry_id is None else frozenset({chain.entry_id})
        mask = admitted(columns, caller, SearchFilters(exclude=excluded, within=within))
        if chain.key is not None:
            same_key = (columns.key == chain.key) & (columns.scope == chain.scope.value)
            mask &= ~(same_key & (columns.owner == chain.owner))
        if shared_only:
            mask &= columns.scope != EntryScope.MEMBER.value
        text = draft.text
        words = Words.of(text.title, text.summary, text.body, text.key, tokenize)
        found: list[PossibleConflict] = []
        for position, cosine in index.nearest(vector, NEAREST, mask):
            doc = index.docs[position]
            theirs = Words.of(doc.title, doc.summary, doc.body, doc.key, tokenize)
            if relation(words, theirs, cosine) is Relation.CONFLICT:
                found.append(PossibleConflict(doc.entry_id, doc.revision))
        return tuple(found)
