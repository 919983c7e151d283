"""The honest "nothing relevant" (docs/decisions/0082-a-search-that-can-answer-nothing.md).

Ranking always finds something: BM25 matches one stray word, the nearest vector is near by definition. The
fusion answers nothing when both signals say the query is about nothing the caller may see: no admitted entry
is closer than `COSINE` to it, and none of its first `DEPTH` results holds `COVERAGE` of the query's IDF mass.
Either signal alone keeps the results: a paraphrase shares no word with its entry but sits close to it; an
identifier (`INC-2317`) sits far from every vector but is held whole. Both are judged over the admitted entries
and their statistics only, so what a caller may not read cannot make her search answer or abstain.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from workspace_memory.search.bm25 import VisibleBM25

COSINE = 0.26
COVERAGE = 0.4
DEPTH = 5
"""Calibrated together on the quality set's negatives and LoCoMo's questions asked of another conversation
(`make eval`): 70% of the one and 51 to 73% of the other come back empty, with no answerable query of the quality
set lost and 0.1 point of LoCoMo's recall@5. A cosine floor of 0.28 starts losing paraphrases."""


def nothing_relevant(
    bm25: VisibleBM25, tokens: Sequence[Sequence[str]], terms: Sequence[str], mask: Any, cosines: Any, fused: Any
) -> bool:
    """Whether a fused search should answer nothing: `cosines` and `fused` over the whole index, `mask` what the
    caller may see and the filters keep, `tokens` each document's terms, `terms` the query's."""
    import numpy as np

    if not mask.any() or float(cosines[mask].max()) >= COSINE:
        return False
    idf = bm25.idf(terms, mask)
    mass = sum(idf.values())
    if mass == 0:
        return True
    admitted = np.flatnonzero((fused > 0) & mask)
    leading = admitted if len(admitted) <= DEPTH else admitted[np.argpartition(-fused[admitted], DEPTH - 1)[:DEPTH]]
    held = 0.0
    for i in leading:  # each document's words made a set once, not once per query term
        words = set(tokens[i])
        held = max(held, sum(v for t, v in idf.items() if t in words))
    return held / mass < COVERAGE
