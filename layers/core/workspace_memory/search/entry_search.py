"""Searching a workspace's entries (docs/architecture.md#search).

A warm process keeps one `HybridIndex` per workspace, keyed by the workspace's `entriesRevision` (bumped by
every entry write and forget, in the write's own transaction). A search reads membership and that revision
in one consistent read; when the revision is the one the index was built at, nothing else is read. When it
moved, the index is rebuilt incrementally: one projected Query lists every retained revision's metadata (no
ciphertext), and only revisions the index does not hold yet are fetched and decrypted; text, tokens and
vectors of the others are reused. The indexes live in a byte budget, least recently used out.

A process with no index for the workspace starts from its encrypted snapshot (`search_snapshot`: one
decryption for the whole index) and decrypts only the revisions written since; a build that had to decrypt
more than `SNAPSHOT_AFTER` revisions stores a new snapshot.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from typing import TYPE_CHECKING

from workspace_memory.document.versions import utf8_size
from workspace_memory.entries.citations import Citations, overall
from workspace_memory.entries.model import EntryText, Previously, SealedVector, entry_context
from workspace_memory.entries.validation import validate_key_prefix
from workspace_memory.kernel import metrics
from workspace_memory.kernel.clock import Clock, epoch_time
from workspace_memory.kernel.errors import InvalidInput
from workspace_memory.kernel.metrics import Metric, SearchOrigin
from workspace_memory.kernel.sealed import unseal
from workspace_memory.kernel.terms import (
    SEARCH_DEFAULT_K,
    SEARCH_MAX_K,
    CitationState,
    EntryScope,
    EntryStatus,
    EntryType,
)
from workspace_memory.search import search_snapshot
from workspace_memory.search.judged import judged
from workspace_memory.store import entry_queries, keys, search_queries
from workspace_memory.store.ports import Cipher, Table
from workspace_memory.store.search_records import RevisionMetadata
from workspace_memory.store.search_records import entries_revision as entries_revision
from workspace_memory.workspaces.access import Caller, load_caller
from workspace_memory.workspaces.key_binding import KeyBinding

if TYPE_CHECKING:
    from workspace_memory.search.columns import Columns, Mask
    from workspace_memory.search.engine import Embedder, HybridIndex, SearchDoc

MAX_QUERY_BYTES = 1024
"""A query is a question, not a document: 1 KiB of UTF-8 at most (a 2 KiB query is refused)."""
MAX_K = SEARCH_MAX_K
DEFAULT_K = SEARCH_DEFAULT_K
INDEX_MEMORY_BUDGET = 256 * 1024 * 1024
"""Bytes of warm indexes one process keeps (all workspaces together); least recently used out beyond it."""
FETCH_BATCH = 100
"""Revisions fetched per consistent read (TransactGetItems' limit) when the index needs their text."""
METADATA_PAGE = 1000
SNAPSHOT_AFTER = 50
"""A build that decrypted more revisions than this (in one go, or one write at a time since the last snapshot)
stores a snapshot, so the next cold process does not."""


@dataclass(frozen=True)
class SearchFilters:
    """Narrow a search before ranking: a scope, a type, a key prefix (`namespace/` or `namespace/na`), or the
    revisions valid at `as_of` instead of the active ones."""

    scope: EntryScope | None = None
    type: EntryType | None = None
    key_prefix: str | None = None
    as_of: float | None = None
    exclude: frozenset[str] = frozenset()
    """Entry ids left out before ranking (selective recall: the rules the recalled block already shows)."""
    within: KeyBinding | None = None
    """A key session's binding (decisions/0077): what is outside it is left out before ranking."""


@dataclass(frozen=True)
class SearchResult:
    entry_id: str
    revision: int
    title: str
    summary: str
    score: float
    body: str = field(default="", repr=False)
    """The entry's body, for selective recall's block; the search routes answer without it."""
    previously: Previously | None = field(default=None, repr=False)
    """What the revision replaced, for selective recall's dated note."""
    source_state: CitationState | None = None
    """What it cites, judged now for the caller: `ok` or `changed` (a hit whose cited source is gone is not
    answered: `Found.hidden`); None when it cites nothing."""


@dataclass(frozen=True)
class Found:
    """A search's answer: its results, best first, and how many better ranked hits it left out because a cited
    source is gone or not visible to the caller (docs/decisions/0081), as a list page counts its `hidden`."""

    results: list[SearchResult]
    hidden: int = 0


@dataclass(frozen=True)
class BuildStats:
    """What the last index build of this service did (for the bench and the tests): how many revisions it
    decrypted one by one, whether it started from a snapshot, and whether it stored one."""

    decrypted: int
    from_snapshot: bool
    snapshot_stored: bool


@dataclass(frozen=True)
class _Warm:
    revision: int
    index: HybridIndex
    nbytes: int
    expires: float | None = None
    """The earliest `ttl` of a revision it holds: from then on it is rebuilt, as a changed revision is, so a
    revision that expired by time is not found either (docs/decisions/0056)."""
    unsealed: int = 0
    """Revisions this process decrypted into the index since a snapshot last held them: a warm index refreshed
    one write at a time (the write-time conflict check) stores a snapshot once they add up, as one cold build
    that decrypted as many would."""


class WarmIndexes:
    """Each workspace's index in this process, within a byte budget (least recently used out)."""

    def __init__(self, budget: int = INDEX_MEMORY_BUDGET) -> None:
        self._budget = budget
        self._warm: OrderedDict[str, _Warm] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, workspace_id: str) -> _Warm | None:
        with self._lock:
            warm = self._warm.get(workspace_id)
            if warm is not None:
                self._warm.move_to_end(workspace_id)
            return warm

    def put(self, workspace_id: str, warm: _Warm) -> None:
        with self._lock:
            self._warm.pop(workspace_id, None)
            self._warm[workspace_id] = warm
            while len(self._warm) > 1 and self.nbytes > self._budget:
                self._warm.popitem(last=False)

    def drop(self, workspace_id: str) -> None:
        with self._lock:
            self._warm.pop(workspace_id, None)

    @property
    def nbytes(self) -> int:
        return sum(w.nbytes for w in self._warm.values())

    def __contains__(self, workspace_id: str) -> bool:
        return workspace_id in self._warm


def validate_query(query: str, k: int) -> None:
    if not query.strip():
        raise InvalidInput("query must not be empty")
    if utf8_size(query) > MAX_QUERY_BYTES:
        raise InvalidInput(f"query must be at most {MAX_QUERY_BYTES} bytes of UTF-8")
    if not 1 <= k <= MAX_K:
        raise InvalidInput(f"k must be between 1 and {MAX_K}")


def admitted(columns: Columns, caller: Caller, filters: SearchFilters) -> Mask:
    """What `caller` may see of an index (every workspace-scope entry, her own member-scope ones) and
    `filters` keep: the revisions current now, or at `as_of`."""
    mask: Mask = (columns.scope != EntryScope.MEMBER.value) | (columns.owner == caller.user_id)
    mask &= columns.current() if filters.as_of is None else columns.valid_at(filters.as_of)
    if filters.exclude:
        mask &= columns.without(filters.exclude)
    if filters.scope is not None:
        mask &= columns.scope == filters.scope.value
    if filters.type is not None:
        mask &= columns.type == filters.type.value
    if filters.key_prefix is not None:
        mask &= columns.key_starts_with(filters.key_prefix)
    if filters.within is not None:
        mask &= _within(columns, filters.within)
    return mask


def _within(columns: Columns, binding: KeyBinding) -> Mask:
    """The rows inside a binding: one of its scopes, one of its types, a key under one of its prefixes (an entry
    without a key is stored as "", which no prefix starts)."""
    mask = columns.everything()
    if binding.scopes is not None:
        mask &= _any(columns.everything(), [columns.scope == scope.value for scope in binding.scopes])
    if binding.types is not None:
        mask &= _any(columns.everything(), [columns.type == kind.value for kind in binding.types])
    if binding.key_prefixes is not None:
        mask &= _any(columns.everything(), [columns.key_starts_with(prefix) for prefix in binding.key_prefixes])
    return mask


def _any(everything: Mask, masks: list[Mask]) -> Mask:
    found = ~everything
    for mask in masks:
        found |= mask
    return found


class SearchService:
    def __init__(
        self,
        table: Table,
        cipher: Cipher,
        clock: Clock,
        embedder: Embedder,
        warm: WarmIndexes | None = None,
        *,
        snapshot_after: int | None = SNAPSHOT_AFTER,
        citations: Citations | None = None,
    ) -> None:
        self._table = table
        self._cipher = cipher
        self._clock = clock
        self._embedder = embedder
        self.warm = warm if warm is not None else WarmIndexes()
        self._snapshot_after = snapshot_after
        """None: never read or store snapshots (the bench's comparison)."""
        self.last_build: BuildStats | None = None
        self.citations = citations if citations is not None else Citations(table, cipher)
        """The judgement of the hits' citations, with this process's cache of cited texts' digests."""

    def search(
        self, user_id: str, workspace_id: str, query: str, k: int = DEFAULT_K, filters: SearchFilters | None = None
    ) -> Found:
        """The caller's best `k` entries for `query`: member-private entries of others never take part."""
        validate_query(query, k)
        filters = filters or SearchFilters()
        if filters.key_prefix is not None:
            validate_key_prefix(filters.key_prefix)
        caller, (counter,) = load_caller(self._table, workspace_id, user_id, [keys.entry_counter(workspace_id)])
        with metrics.elapsed(Metric.SEARCH_LATENCY, origin=SearchOrigin.ROUTE):
            return self.ranked(caller, entries_revision(counter), query, k, filters)

    def ranked(self, caller: Caller, entries_revision: int, query: str, k: int, filters: SearchFilters) -> Found:
        """A search for a caller already loaded with the workspace's `entriesRevision` (recall reads both in its
        own consistent read). Where scores tie, the heads of the tied entries are read for their read counts.
        The hits are then judged by what they cite, as the list judges its rows (`judged`): one consistent read
        of what the answered hits cite (none when they cite nothing; one more per round ranking past a dropped
        hit)."""
        workspace_id = caller.workspace.id
        index = self.index(workspace_id, entries_revision)
        reads = partial(entry_queries.read_counts, self._table, workspace_id)  # asked only when scores tie
        mask = admitted(index.columns, caller, filters)
        now = self._clock.now()

        def judge(docs: Sequence[SearchDoc]) -> list[CitationState | None]:
            cited_by = [doc.sources for doc in docs]
            judged_now = self.citations.judge(workspace_id, caller.user_id, cited_by, now, filters.within)
            return [overall(states) for states in judged_now]

        kept, hidden = judged(lambda n: index.search(query, n, mask=mask, reads=reads), index.docs, k, judge)
        return Found([_result(index.docs[h.position], h.score, state) for h, state in kept], hidden)

    def index(self, workspace_id: str, entries_revision: int) -> HybridIndex:
        """The workspace's index at `entries_revision`: the warm one when it is current, else rebuilt from it."""
        from workspace_memory.search.engine import HybridIndex

        warm = self.warm.get(workspace_id)
        now = self._clock.now()
        if warm is not None and warm.revision == entries_revision and (warm.expires is None or now < warm.expires):
            return warm.index
        snapshot = None
        if warm is None and self._snapshot_after is not None:
            snapshot = search_snapshot.load(self._table, self._cipher, workspace_id, now)
            if snapshot is not None and snapshot.complete and snapshot.entries_revision == entries_revision:
                # nothing written since (and nothing it holds expired: its ttl is the earliest of theirs)
                index = HybridIndex(snapshot.docs, self._embedder)
                self.warm.put(workspace_id, _Warm(entries_revision, index, index.nbytes, snapshot.expires))
                self.last_build = BuildStats(0, from_snapshot=True, snapshot_stored=False)
                return index
        if warm is not None:
            held = {(d.entry_id, d.revision): d for d in warm.index.docs}
        else:
            held = {} if snapshot is None else {(d.entry_id, d.revision): d for d in snapshot.docs}
        metadata = self.retained(workspace_id, now)
        docs, decrypted = self.assembled(workspace_id, metadata, held)
        index = HybridIndex(docs, self._embedder) if warm is None else warm.index.rebuilt(docs)
        expires = earliest_expiry(metadata)
        unsealed = decrypted + (warm.unsealed if warm is not None else 0)
        stored = False
        if self._snapshot_after is not None and unsealed > self._snapshot_after and entries_revision > 0:
            stored = search_snapshot.store(
                self._table,
                self._cipher,
                workspace_id,
                entries_revision,
                index.docs,
                now=now,
                ttl=expires,
            )
        self.warm.put(workspace_id, _Warm(entries_revision, index, index.nbytes, expires, 0 if stored else unsealed))
        self.last_build = BuildStats(decrypted, from_snapshot=snapshot is not None, snapshot_stored=stored)
        return index

    def retained(self, workspace_id: str, now: float) -> list[RevisionMetadata]:
        """Every revision's metadata not expired at `now`, up to 1,000 a page, no ciphertext (at 1,000 entries the
        bench found a short page that was not the last one: the listing runs until an empty page)."""
        listed = search_queries.revision_metadata(self._table, workspace_id, page_size=METADATA_PAGE)
        return [m for m in listed if not m.expired(now)]

    def assembled(
        self,
        workspace_id: str,
        metadata: Sequence[RevisionMetadata],
        held: dict[tuple[str, int], SearchDoc],
        budget: int | None = None,
    ) -> tuple[list[SearchDoc], int]:
        """The documents of `metadata`, in its order: those `held` with their current metadata, the others fetched
        and decrypted (at most `budget` of them; the rest left out). Returns them and how many it decrypted."""
        fresh = [m for m in metadata if m.at not in held]
        opened = dict(self._open(workspace_id, fresh if budget is None else fresh[:budget]))
        docs: list[SearchDoc] = []
        for meta in metadata:
            known = held.get(meta.at)
            if known is not None:
                docs.append(_refreshed(known, meta))
            elif meta.at in opened:
                text, sealed = opened[meta.at]
                same_model = sealed is not None and sealed.model == self._embedder.model_id
                docs.append(_doc(meta, text, sealed if same_model else None))
        return docs, len(opened)

    def _open(
        self, workspace_id: str, wanted: Sequence[RevisionMetadata]
    ) -> Iterator[tuple[tuple[str, int], tuple[EntryText, SealedVector | None]]]:
        """Fetch and decrypt the revisions the index does not hold: one consistent read per 100."""
        for start in range(0, len(wanted), FETCH_BATCH):
            batch = wanted[start : start + FETCH_BATCH]
            for meta, record in zip(batch, search_queries.revisions(self._table, batch), strict=True):
                if record is None:  # forgotten between the Query and the read: the next revision drops it anyway
                    continue
                context = entry_context(workspace_id, *meta.at)
                plaintext = unseal(self._cipher, record.ciphertext, context, record.sha256)
                yield meta.at, (EntryText.parse(plaintext), SealedVector.of(plaintext))


def earliest_expiry(metadata: Sequence[RevisionMetadata]) -> int | None:
    """The earliest `ttl` of the revisions: an index or snapshot holding them lives no longer."""
    ttls = [m.ttl for m in metadata if m.ttl is not None]
    return min(ttls) if ttls else None


def _doc(meta: RevisionMetadata, text: EntryText, sealed: SealedVector | None) -> SearchDoc:
    from workspace_memory.search.engine import SearchDoc, unpack_vector

    return SearchDoc(
        entry_id=meta.entry_id,
        revision=meta.revision,
        scope=meta.scope.value,
        owner=meta.scope_owner,
        type=meta.type.value,
        key=text.key,
        title=text.title,
        summary=text.summary,
        body=text.body,
        valid_from=epoch_time(meta.valid_from),
        valid_to=_valid_to(meta),
        vector=None if sealed is None else unpack_vector(sealed.packed),
        previously=text.previously,
        sources=text.sources,
    )


def _result(doc: SearchDoc, score: float, state: CitationState | None) -> SearchResult:
    return SearchResult(doc.entry_id, doc.revision, doc.title, doc.summary, score, doc.body, doc.previously, state)


def _valid_to(meta: RevisionMetadata) -> float | None:
    if meta.status is EntryStatus.ACTIVE:
        return None
    return None if meta.superseded_at is None else epoch_time(meta.superseded_at)


def _refreshed(doc: SearchDoc, meta: RevisionMetadata) -> SearchDoc:
    """A held revision with its current metadata (a superseded revision gains its end; text never changes)."""
    return replace(doc, valid_to=_valid_to(meta), type=meta.type.value)
