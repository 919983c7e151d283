"""The search quality set (issue 11, item 6): loading it, running it through the engine, and its metrics.

Shared by `scripts/eval_search.py` (the table `make eval` prints) and `tests/unit/search/test_search_quality.py`
(what the table must keep showing), so both measure the same thing the same way.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, cast

from workspace_memory.search import engine as search
from workspace_memory.search.engine import Embedder, HybridIndex, Mode, SearchDoc, tokenize

QUALITY_DIR = Path(__file__).resolve().parent.parent / "tests" / "quality"
ENTRIES_FILE = QUALITY_DIR / "entries.jsonl"
QUERIES_FILE = QUALITY_DIR / "queries.jsonl"

Kind = Literal["paraphrase", "synonym", "keyword", "multilingual", "negative"]
KINDS: tuple[Kind, ...] = ("paraphrase", "synonym", "keyword", "multilingual", "negative")
ENTRY_TYPES = ("fact", "rule", "preference", "reference")
RECALL_K = 5
"""Selective recall puts a handful of entries in front of the model: recall is measured at 5."""
MRR_K = 10


@dataclass(frozen=True)
class Entry:
    id: str
    type: str
    title: str
    summary: str
    body: str
    key: str | None = None

    @property
    def text(self) -> str:
        return search.embedding_text(self.title, self.summary, self.body)


@dataclass(frozen=True)
class Query:
    query: str
    relevant: tuple[str, ...]
    kind: Kind


def _lines(path: Path) -> Iterator[dict[str, object]]:
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            yield cast(dict[str, object], json.loads(line))


def load_entries(path: Path = ENTRIES_FILE) -> list[Entry]:
    entries = []
    for row in _lines(path):
        key = row.get("key")
        entries.append(
            Entry(
                id=str(row["id"]),
                type=str(row["type"]),
                title=str(row["title"]),
                summary=str(row["summary"]),
                body=str(row["body"]),
                key=None if key is None else str(key),
            )
        )
    return entries


def load_queries(path: Path = QUERIES_FILE) -> list[Query]:
    queries = []
    for row in _lines(path):
        kind = str(row["kind"])
        if kind not in KINDS:
            raise ValueError(f"unknown query kind {kind!r}")
        relevant = row["relevant"]
        if not isinstance(relevant, list):
            raise ValueError("relevant must be a list of entry ids")
        queries.append(Query(str(row["query"]), tuple(str(r) for r in relevant), kind))
    return queries


def build_index(entries: Sequence[Entry], embedder: Embedder) -> HybridIndex:
    """Every entry as one active workspace revision: the set measures ranking, not visibility."""
    docs = [SearchDoc(e.id, 1, "workspace", "-", e.type, e.key, e.title, e.summary, e.body, 0.0, None) for e in entries]
    return HybridIndex(docs, embedder)


def shared_tokens(query: str, entry: Entry) -> set[str]:
    """The engine's own tokens (stems, stop words out) a query has in common with an entry's text."""
    query_tokens, entry_tokens = tokenize([query, entry.text])
    return set(query_tokens) & set(entry_tokens)


def disjoint_queries(queries: Iterable[Query], entries: Sequence[Entry]) -> list[tuple[Query, str]]:
    """(query, relevant id) pairs where BM25 cannot see the match: not one token in common."""
    by_id = {e.id: e for e in entries}
    return [(q, r) for q in queries for r in q.relevant if not shared_tokens(q.query, by_id[r])]


@contextmanager
def cosine_floor(value: float) -> Iterator[None]:
    """Evaluate with another `MIN_COSINE` (the engine reads the constant at each search): for the sweep only."""
    saved = search.MIN_COSINE
    search.MIN_COSINE = value
    try:
        yield
    finally:
        search.MIN_COSINE = saved


def ranked(index: HybridIndex, query: Query, mode: Mode, k: int = MRR_K) -> list[str]:
    return [hit.entry_id for hit in index.search(query.query, k, mode=mode)]


def recall_at(found: Sequence[str], relevant: Sequence[str], k: int = RECALL_K) -> float:
    """Share of the relevant ids among the first k results."""
    return len(set(found[:k]) & set(relevant)) / len(relevant)


def reciprocal_rank(found: Sequence[str], relevant: Sequence[str]) -> float:
    """1 / rank of the first relevant result; 0 when none is listed."""
    for rank, entry_id in enumerate(found, start=1):
        if entry_id in relevant:
            return 1.0 / rank
    return 0.0


@dataclass(frozen=True)
class Score:
    """One mode over one group of queries: recall@5 and MRR@10 over queries that have relevant ids; for
    negatives, the share that found nothing at all and the mean number of results (up to the whole set)."""

    queries: int
    recall: float
    mrr: float
    empty_share: float
    mean_results: float


def score(index: HybridIndex, queries: Sequence[Query], mode: Mode) -> Score:
    positives = [q for q in queries if q.relevant]
    negatives = [q for q in queries if not q.relevant]
    recalls = [recall_at(ranked(index, q, mode), q.relevant) for q in positives]
    ranks = [reciprocal_rank(ranked(index, q, mode), q.relevant) for q in positives]
    counts = [len(ranked(index, q, mode, k=len(index.docs))) for q in negatives]
    return Score(
        queries=len(queries),
        recall=_mean(recalls),
        mrr=_mean(ranks),
        empty_share=_mean([1.0 if c == 0 else 0.0 for c in counts]),
        mean_results=_mean([float(c) for c in counts]),
    )


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else float("nan")
