"""Hybrid search over a workspace's decrypted entries (docs/architecture.md#the-search-engine), pure and in-process.

BM25 (bm25s' tokenizer, NLTK's 179 English stop words, Snowball stems) and embedding cosine each rank the
candidates the caller may see; weighted reciprocal rank fusion merges the two lists. Nothing here reads storage
or decrypts: the service hands in `SearchDoc`s it opened, so no plaintext index ever exists outside ciphertext
or outside the process. Heavy imports (numpy, bm25s, the embedding model) are paid on the first search, not at
cold start.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Any, Protocol

from workspace_memory.search import abstention, stopwords
from workspace_memory.search.bm25 import VisibleBM25
from workspace_memory.search.columns import Columns

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from workspace_memory.entries.model import Previously, Source

    Vector = NDArray[np.float32]
    Matrix = NDArray[np.float32]
    Mask = NDArray[np.bool_]
    Positions = NDArray[np.intp]

RRF_K = 2
"""Reciprocal rank fusion's constant (docs/architecture.md#the-search-engine): a document's fused score is
Σ weight / (RRF_K + rank). A small k lets each list's first ranks decide (k = 60 flattened a good BM25 list
into a weak vector one); chosen with the weights on the quality set and confirmed on LoCoMo (`make eval`,
docs/decisions/0050-search-that-finds-what-people-mean.md)."""
BM25_WEIGHT = 1.5
EMBEDDING_WEIGHT = 1.0
"""Each list's weight in the fusion: BM25's first ranks are the surer ones on both sets."""
STOPWORDS: tuple[str, ...] | str = stopwords.ENGLISH
"""What the tokenizer leaves out (a tuple, or the name of one of bm25s' lists, for the eval's comparisons)."""
MIN_COSINE = 0.24
"""Below this cosine a vector hit is noise, not a candidate. Chosen on the quality set (`make eval`, swept with
`--floors`): from 0.10 to 0.24 the fusion's recall@5 holds while the vector list's hits on queries about nothing
in memory fall from ~31 to ~1; above 0.24 synonyms and paraphrases drop out
(docs/decisions/0030-the-search-quality-set.md)."""


class Mode(Enum):
    """Which rankings a search uses: the product always fuses; the other two exist to measure the fusion."""

    HYBRID = "hybrid"
    BM25 = "bm25"
    EMBEDDING = "embedding"


class Embedder(Protocol):
    """Turns texts into unit vectors; `model_id` is stored beside each vector, so a vector made by another
    model is recomputed rather than compared."""

    @property
    def model_id(self) -> str: ...

    def embed(self, texts: Sequence[str]) -> Matrix:
        """One L2-normalised float32 row per text."""
        ...


def pack_vector(vector: Vector) -> str:
    """A vector as it is sealed with its entry: float16 (half the bytes; cosine moves by < 1e-3), base64."""
    import numpy as np

    return base64.b64encode(np.asarray(vector, dtype=np.float16).tobytes()).decode("ascii")


def unpack_vector(packed: str) -> Vector:
    import numpy as np

    return np.frombuffer(base64.b64decode(packed), dtype=np.float16).astype(np.float32)


@dataclass(frozen=True)
class SearchDoc:
    """One entry revision as the engine sees it: what the caller's filters and visibility need, the text it
    ranks, and its vector (None: the index embeds it)."""

    entry_id: str
    revision: int
    scope: str
    owner: str
    type: str
    key: str | None
    title: str
    summary: str
    body: str
    valid_from: float
    valid_to: float | None
    vector: Vector | None = None
    previously: Previously | None = None
    """What the revision replaced (one hop), shown with it and never ranked: a replaced statement is history."""
    sources: tuple[Source, ...] = ()
    """What the revision cites, never ranked: judged for the hits a search answers (docs/decisions/0081)."""

    @property
    def text(self) -> str:
        return f"{self.title}\n{self.summary}\n{self.body}"

    @property
    def index_text(self) -> str:
        """What BM25 ranks: the text and the key's words (`deploy/window`: "deploy", "window"). The vector stays
        the text's alone (`embedding_text`, as sealed with the entry)."""
        return self.text if not self.key else f"{self.key.replace('/', ' ')}\n{self.text}"


def embedding_text(title: str, summary: str, body: str) -> str:
    """What a vector is computed from: the same text BM25 ranks."""
    return f"{title}\n{summary}\n{body}"


@dataclass(frozen=True)
class Hit:
    entry_id: str
    revision: int
    score: float
    position: int
    """The document's place in the index (`HybridIndex.docs[position]`), so a caller needs no lookup table."""


_STEMMER: Any = None


def tokenize(texts: Sequence[str]) -> list[list[str]]:
    """Lower-cased words of two letters or more, `STOPWORDS` out, Snowball-stemmed ("deploying" and
    "deployment" meet at "deploy")."""
    global _STEMMER
    import bm25s

    if _STEMMER is None:
        import Stemmer

        _STEMMER = Stemmer.Stemmer("english")
    listed = STOPWORDS if isinstance(STOPWORDS, str) else list(STOPWORDS)
    tokens: list[list[str]] = bm25s.tokenize(
        list(texts), stopwords=listed, stemmer=_STEMMER, return_ids=False, show_progress=False
    )
    return tokens


def fuse(
    size: int,
    rankings: Sequence[Positions],
    weights: Sequence[float],
    ranks: Sequence[NDArray[np.float64]] | None = None,
) -> NDArray[np.float64]:
    """Weighted reciprocal rank fusion over `size` documents: each ranking is positions, best first (rank 1 =
    first, or each place's rank in `ranks`); a document no ranking holds scores 0. Summed list by list, as
    floats, so equal ranks tie exactly."""
    import numpy as np

    fused = np.zeros(size, dtype=np.float64)
    for j, (ranking, weight) in enumerate(zip(rankings, weights, strict=True)):
        places = np.arange(1, len(ranking) + 1, dtype=np.float64) if ranks is None else ranks[j]
        fused[ranking] += weight / (RRF_K + places)
    return fused


def shared_ranks(ordered: NDArray[np.float64]) -> NDArray[np.float64]:
    """The rank of each place of scores sorted best first, equal scores sharing the best of their places
    (`[0.9, 0.5, 0.5, 0.1]`: 1, 2, 2, 4): two documents one ranking cannot tell apart fuse to equal scores when
    the other agrees, and the tie is left to `top`."""
    import numpy as np

    descending = -np.asarray(ordered, dtype=np.float64)
    shared: NDArray[np.float64] = (np.searchsorted(descending, descending, side="left") + 1).astype(np.float64)
    return shared


ReadCounts = Callable[[Sequence[str]], Mapping[str, int]]
"""How often each of some entries was read (an entry missing from the answer: never)."""


def top(scores: NDArray[np.float64], k: int, entry_ids: NDArray[np.str_], reads: ReadCounts | None = None) -> list[int]:
    """The positions of the `k` best positive scores; equal scores go to the more-read entry first (`reads`,
    asked only for the entries that tie, so a search without ties reads nothing), then by entry id. A partition
    finds the k-th score, and only the documents at or above it are sorted (never the whole corpus)."""
    import numpy as np

    ranked = np.flatnonzero(scores > 0)
    if len(ranked) > k:
        kth = np.partition(scores[ranked], len(ranked) - k)[len(ranked) - k]
        ranked = ranked[scores[ranked] >= kth]
    values, counts = np.unique(scores[ranked], return_counts=True)
    tied = sorted({str(entry_ids[i]) for i in ranked[np.isin(scores[ranked], values[counts > 1])]})
    counted = reads(tied) if reads is not None and tied else {}
    return sorted(
        (int(i) for i in ranked), key=lambda i: (-scores[i], -counted.get(str(entry_ids[i]), 0), entry_ids[i])
    )[:k]


class HybridIndex:
    """The searchable form of a set of documents: a BM25 index and a matrix of unit vectors. Immutable: a
    changed set is a new index, built from the old one's tokens and vectors (`rebuilt`), so only new or
    changed revisions are tokenised and embedded."""

    def __init__(
        self,
        docs: Sequence[SearchDoc],
        embedder: Embedder,
        *,
        tokens: Sequence[list[str]] | None = None,
    ) -> None:
        import numpy as np

        self.docs = tuple(docs)
        self.columns = Columns.of(self.docs)
        self.embedder = embedder
        self.tokens = list(tokens) if tokens is not None else tokenize([d.index_text for d in self.docs])
        # Postings only: BM25's statistics are computed per search over what that caller may see (bm25.py).
        self._bm25 = VisibleBM25(self.tokens)
        missing = [i for i, d in enumerate(self.docs) if d.vector is None]
        vectors: list[Vector] = [d.vector for d in self.docs if d.vector is not None]
        if missing:
            made = embedder.embed([self.docs[i].text for i in missing])
            filled = dict(zip(missing, made, strict=True))
            vectors = [d.vector if d.vector is not None else filled[i] for i, d in enumerate(self.docs)]
        self._vectors: Matrix = np.stack(vectors).astype(np.float32) if vectors else np.zeros((0, 1), dtype=np.float32)

    def rebuilt(self, docs: Sequence[SearchDoc]) -> HybridIndex:
        """A new index over `docs` (their metadata as given), reusing the tokens and vectors of every revision
        this one already holds."""
        known = {(d.entry_id, d.revision): i for i, d in enumerate(self.docs)}
        kept: list[SearchDoc] = []
        tokens: list[list[str]] = []
        fresh = [d for d in docs if (d.entry_id, d.revision) not in known]
        fresh_tokens = dict(
            zip(((d.entry_id, d.revision) for d in fresh), tokenize([d.index_text for d in fresh]), strict=True)
        )
        for doc in docs:
            at = known.get((doc.entry_id, doc.revision))
            if at is None:
                kept.append(doc)
                tokens.append(fresh_tokens[(doc.entry_id, doc.revision)])
            else:
                kept.append(doc if doc.vector is not None else _with_vector(doc, self._vectors[at]))
                tokens.append(self.tokens[at])
        return HybridIndex(kept, self.embedder, tokens=tokens)

    def cosines_between(self, rows: Positions, columns: Positions) -> Matrix:
        """The cosine of each document at `rows` with each at `columns` (their vectors are unit rows)."""
        similar: Matrix = self._vectors[rows] @ self._vectors[columns].T
        return similar

    def nearest(self, vector: Vector, k: int, mask: Mask) -> list[tuple[int, float]]:
        """The positions of the `k` documents `mask` admits whose vectors are nearest `vector`, nearest first,
        with their cosines (the write-time contradiction check: no query, no BM25)."""
        if not self.docs:
            return []
        cosines = self._vectors @ vector
        return [(int(i), float(cosines[i])) for i in _descending(cosines, mask)[:k]]

    @property
    def nbytes(self) -> int:
        """What the index holds in memory, roughly: vectors, tokens and text (for the warm cache's budget)."""
        text = sum(len(d.text) + 200 for d in self.docs)
        tokens = sum(sum(len(t) + 56 for t in doc) for doc in self.tokens)
        return int(self._vectors.nbytes) + text + tokens + self._bm25.nbytes

    def search(
        self,
        query: str,
        k: int,
        *,
        mask: Mask | None = None,
        mode: Mode = Mode.HYBRID,
        query_vector: Vector | None = None,
        reads: ReadCounts | None = None,
    ) -> list[Hit]:
        """The best `k` of the documents `mask` admits (built from `columns`; None: all). Visibility and filters
        are applied before ranking, so a hidden document never takes a rank, and before BM25's statistics are
        taken, so it moves no score. Equal fused scores go to the entry `reads` says was read more."""

        if not self.docs:
            return []
        mask = self.columns.everything() if mask is None else mask
        rankings: list[Positions] = []
        ranks: list[NDArray[np.float64]] = []
        weights: list[float] = []
        terms: list[str] = []
        cosines: Any = None
        if mode is not Mode.EMBEDDING:
            terms = tokenize([query])[0]
            scores = self._bm25.scores(terms, mask)  # with the statistics of what `mask` admits
            rankings.append(_descending(scores, scores > 0))  # no terms (`the`, `9`): the embeddings alone decide
            ranks.append(shared_ranks(scores[rankings[-1]]))
            weights.append(BM25_WEIGHT)
        if mode is not Mode.BM25:
            weights.append(EMBEDDING_WEIGHT)
            vector = self.embedder.embed([query])[0] if query_vector is None else query_vector
            cosines = self._vectors @ vector
            rankings.append(_descending(cosines, mask & (cosines >= MIN_COSINE)))
            ranks.append(shared_ranks(cosines[rankings[-1]]))
        fused = fuse(len(self.docs), rankings, weights, ranks)
        if mode is Mode.HYBRID and abstention.nothing_relevant(self._bm25, self.tokens, terms, mask, cosines, fused):
            return []
        return [
            Hit(self.docs[i].entry_id, self.docs[i].revision, round(float(fused[i]), 6), i)
            for i in top(fused, k, self.columns.entry_id, reads)
        ]


def _descending(scores: Any, keep: Mask) -> Positions:
    """The positions `keep` admits, best score first, equal scores in index order."""
    import numpy as np

    kept = np.flatnonzero(keep)
    ordered: Positions = kept[np.argsort(-scores[kept], kind="stable")]
    return ordered


def _with_vector(doc: SearchDoc, vector: Vector) -> SearchDoc:
    from dataclasses import replace

    return replace(doc, vector=vector)
