"""BM25 whose statistics come from the documents the caller may see, and from nothing else.

bm25s computes IDF, the document count and the average length once, over the whole corpus it indexed; a
workspace's index holds every member's private entries, so its scores (and the order of a member's own
results) would move with words in entries she may not read. Here the corpus keeps only postings (term →
documents and term frequencies) and lengths; every statistic is computed per query over the caller's mask,
so a hidden document cannot move any score. The formula is bm25s' default (Lucene's, k1 = 1.5, b = 0.75), and
a unit test pins equal scores to bm25s' whenever every document is visible.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

K1 = 1.5
B = 0.75


class VisibleBM25:
    """Postings of a tokenised corpus; `scores` ranks it for one caller's mask."""

    def __init__(self, tokens: Sequence[Sequence[str]]) -> None:
        import numpy as np

        self.size = len(tokens)
        self._lengths = np.array([len(doc) for doc in tokens], dtype=np.float64)
        docs: dict[str, list[int]] = {}
        freqs: dict[str, list[int]] = {}
        for position, doc in enumerate(tokens):
            for term, count in Counter(doc).items():
                docs.setdefault(term, []).append(position)
                freqs.setdefault(term, []).append(count)
        self._postings: dict[str, tuple[Any, Any]] = {
            term: (np.array(docs[term], dtype=np.int64), np.array(freqs[term], dtype=np.float64)) for term in docs
        }

    def scores(self, terms: Sequence[str], mask: Any) -> Any:
        """One score per document: zero where the mask hides it or no query term occurs in it. N, each term's
        document frequency and the average length are those of the visible documents."""
        import numpy as np

        out = np.zeros(self.size, dtype=np.float64)
        visible = int(mask.sum())
        if visible == 0 or not terms:
            return out
        average = float(self._lengths[mask].mean()) or 1.0
        norm = K1 * (1.0 - B + B * self._lengths / average)
        for term in terms:
            posting = self._postings.get(term)
            if posting is None:
                continue
            positions, tf = posting
            seen = mask[positions]
            if not seen.any():
                continue
            positions, tf = positions[seen], tf[seen]
            df = len(positions)
            idf = np.log(1.0 + (visible - df + 0.5) / (df + 0.5))
            out[positions] += idf * tf / (tf + norm[positions])
        return out

    def idf(self, terms: Sequence[str], mask: Any) -> dict[str, float]:
        """Each distinct term's IDF over the visible documents (the statistic `scores` weighs by), a term none
        holds weighed as if one did: the abstention's measure of how much of a query a document holds, where one
        unknown word must not outweigh the rest of a small workspace's query."""
        import numpy as np

        visible = int(mask.sum())
        found: dict[str, float] = {}
        for term in dict.fromkeys(terms):
            posting = self._postings.get(term)
            df = max(1, 0 if posting is None else int(mask[posting[0]].sum()))
            found[term] = float(np.log(1.0 + (visible - df + 0.5) / (df + 0.5)))
        return found

    @property
    def nbytes(self) -> int:
        postings = sum(int(p.nbytes) + int(f.nbytes) + 64 for p, f in self._postings.values())
        return int(self._lengths.nbytes) + postings
