"""Search hits judged by what they cite (docs/decisions/0081), as the list and recall judge their rows: a hit whose
cited source is gone to the caller is dropped and counted, one whose cited text changed is kept and marked.

Judging is after ranking and for the hits a search answers only, never the corpus: the caller's mask, and so
every score and BM25 statistic, is what it was (decisions/0047). A dropped hit makes room: the next best are
ranked and judged, so the caller still gets `k` results while the index holds more, up to `JUDGED_MAX` hits
judged in all."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from workspace_memory.kernel.terms import CitationState

if TYPE_CHECKING:
    from workspace_memory.search.engine import Hit, SearchDoc

JUDGED_MAX = 100
"""Hits one search judges at most (one consistent read of what they cite when each cites a different item): past
it, a search whose best hits all cite something gone answers fewer than `k`, and `hidden` says how many it left."""

Rank = Callable[[int], Sequence["Hit"]]
"""The best `n` hits of a search, best first (the same order for every `n`: a longer list extends a shorter one)."""
Judge = Callable[[Sequence["SearchDoc"]], Sequence[CitationState | None]]
"""Each document's citations judged now, one state each (None: it cites nothing)."""


def judged(
    rank: Rank, docs: Sequence[SearchDoc], k: int, judge: Judge, limit: int = JUDGED_MAX
) -> tuple[list[tuple[Hit, CitationState | None]], int]:
    """The best `k` hits whose citations are not hidden, with their state, and how many hidden ones ranked
    above the last of them (all those judged when fewer than `k` remain). Each hit is judged once; while
    hidden ones leave fewer than `k`, twice as many hits are ranked, until the index has no more or `limit`."""
    states: dict[int, CitationState | None] = {}
    asked = min(k, limit)
    while True:
        hits = rank(asked)
        fresh = [hit for hit in hits if hit.position not in states]
        states.update(zip((h.position for h in fresh), judge([docs[h.position] for h in fresh]), strict=True))
        shown: list[tuple[Hit, CitationState | None]] = []
        hidden = 0
        for hit in hits:
            if len(shown) == k:
                break
            state = states[hit.position]
            if state is CitationState.HIDDEN:
                hidden += 1
            else:
                shown.append((hit, state))
        if len(shown) == k or len(hits) < asked or asked >= limit:
            return shown, hidden
        asked = min(asked * 2, limit)
