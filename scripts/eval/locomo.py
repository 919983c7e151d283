"""LoCoMo through the engine: one index per conversation, recall and MRR per category, abstention off-memory.

Three corpora: each dialog turn an entry (`turns`, its title the speaker), the same with the previous turn
beside it as a conversational memory is indexed (`turns+prev`), and each observation fact an entry
(`observations`). A question's relevant
entries are its evidence turns, or the observations drawn from them; questions with none in a corpus are left
out of it. The wrong-memory rate asks each conversation's answerable questions of the next conversation's
index, where nothing is about them: the share that come back empty is the abstention rate.

Systems: the engine's three modes and, when the `peers` group is installed, LangGraph's store with the same
embedder (`peer.py`). Every question's vector is computed before anything is timed, so the per-query times
compare rankings, not who embedded first.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scripts.eval import peer
from scripts.eval.locomo_data import ANSWERABLE, CATEGORIES, Conversation
from scripts.search_quality import reciprocal_rank
from workspace_memory.search.engine import Embedder, HybridIndex, Mode, SearchDoc

CORPORA = ("turns", "turns+prev", "observations")
MODES = (Mode.BM25, Mode.EMBEDDING, Mode.HYBRID)
PEER = "langgraph"

Ranker = Callable[[str, int], list[str]]


def systems() -> tuple[str, ...]:
    """The engine's modes, then the peer when it is installed."""
    return tuple(m.value for m in MODES) + ((PEER,) if peer.available() else ())


def rankers(docs: Sequence[SearchDoc], embedder: Embedder) -> dict[str, Ranker]:
    """Each system over one corpus: entry ids, best first."""
    index = HybridIndex(docs, embedder)

    def mode(m: Mode) -> Ranker:
        return lambda query, k: [h.entry_id for h in index.search(query, k, mode=m)]

    found: dict[str, Ranker] = {m.value: mode(m) for m in MODES}
    if peer.available():
        found[PEER] = peer.LangGraphStore(docs, embedder).search
    return found


class CachedEmbedder:
    """Embeds each distinct text once per run (queries repeat across modes, turns across configurations); with
    `path`, the vectors persist between runs (under /tmp, never in the repository)."""

    def __init__(self, inner: Embedder, path: Path | None = None) -> None:
        import numpy as np

        self._inner = inner
        self._path = path
        self._cache: dict[str, Any] = {}
        if path is not None and path.exists():
            with np.load(path, allow_pickle=False) as saved:
                self._cache = dict(zip(saved["texts"].tolist(), saved["vectors"], strict=True))

    @property
    def model_id(self) -> str:
        return self._inner.model_id

    @property
    def inner(self) -> Embedder:
        return self._inner

    def embed(self, texts: Sequence[str]) -> Any:
        import numpy as np

        missing = list(dict.fromkeys(t for t in texts if t not in self._cache))
        if missing:
            self._cache.update(zip(missing, self._inner.embed(missing), strict=True))
        return np.stack([self._cache[t] for t in texts])

    def save(self) -> None:
        import numpy as np

        if self._path is not None and self._cache:
            self._path.parent.mkdir(parents=True, exist_ok=True)
            texts = list(self._cache)
            np.savez(self._path, texts=np.array(texts), vectors=np.stack([self._cache[t] for t in texts]))


def _doc(entry_id: str, title: str, summary: str, body: str) -> SearchDoc:
    return SearchDoc(entry_id, 1, "workspace", "-", "fact", None, title, summary, body, 0.0, None)


def corpus(conversation: Conversation, kind: str) -> tuple[list[SearchDoc], dict[str, set[str]]]:
    """The entries of one conversation and, per evidence turn, the ids of the entries that hold it."""
    holders: dict[str, set[str]] = {}
    docs: list[SearchDoc] = []
    if kind.startswith("turns"):
        before = ""
        for turn in conversation.turns:
            docs.append(_doc(turn.dia_id, turn.speaker, before if kind == "turns+prev" else "", turn.text))
            holders.setdefault(turn.dia_id, set()).add(turn.dia_id)
            before = f"{turn.speaker}: {turn.text}"
    else:
        for fact in conversation.observations:
            docs.append(_doc(fact.id, fact.speaker, "", fact.text))
            for dia_id in fact.dia_ids:
                holders.setdefault(dia_id, set()).add(fact.id)
    return docs, holders


@dataclass
class Tally:
    """Sums for one (corpus, group, mode): recall at each cut and MRR@10 over answerable questions."""

    n: int = 0
    recall5: float = 0.0
    recall10: float = 0.0
    mrr: float = 0.0

    def add(self, found: Sequence[str], relevant: set[str]) -> None:
        self.n += 1
        self.recall5 += len(set(found[:5]) & relevant) / len(relevant)
        self.recall10 += len(set(found[:10]) & relevant) / len(relevant)
        self.mrr += reciprocal_rank(found[:10], list(relevant))

    def cells(self) -> tuple[float, float, float]:
        n = self.n or 1
        return self.recall5 / n, self.recall10 / n, self.mrr / n


@dataclass
class Result:
    systems: tuple[str, ...]
    tallies: dict[tuple[str, str, str], Tally]
    """(corpus, category name or `all`, system) → answerable figures."""
    empty: dict[tuple[str, str], tuple[int, int]]
    """(corpus, system) → (wrong-memory questions that found nothing, wrong-memory questions)."""
    answerable_empty: dict[tuple[str, str], int]
    seconds: dict[str, list[float]] = field(default_factory=dict)
    """system → the time of each of its searches (answerable and wrong-memory, every corpus)."""


def evaluate(conversations: Sequence[Conversation], embedder: Embedder) -> Result:
    names = systems()
    embedder.embed([q.question for c in conversations for q in c.questions])  # vectors first, untimed
    result = Result(names, {}, {}, {}, {name: [] for name in names})

    def ask(ranker: Ranker, name: str, question: str) -> list[str]:
        start = time.perf_counter()
        found = ranker(question, 10)
        result.seconds[name].append(time.perf_counter() - start)
        return found

    for kind in CORPORA:
        built = []
        for conversation in conversations:
            docs, holders = corpus(conversation, kind)
            built.append(rankers(docs, embedder))
            for question in conversation.questions:
                relevant = set().union(*(holders.get(e, set()) for e in question.evidence))
                if question.category not in ANSWERABLE or not relevant:
                    continue
                for name in names:
                    found = ask(built[-1][name], name, question.question)
                    for group in (CATEGORIES[question.category], "all"):
                        result.tallies.setdefault((kind, group, name), Tally()).add(found, relevant)
                    lost = result.answerable_empty.get((kind, name), 0)
                    result.answerable_empty[(kind, name)] = lost + (not found)
        for n, conversation in enumerate(conversations):
            other = built[(n + 1) % len(built)]
            for question in conversation.questions:
                if question.category not in ANSWERABLE:
                    continue
                for name in names:
                    hits = ask(other[name], name, question.question)
                    done, total = result.empty.get((kind, name), (0, 0))
                    result.empty[(kind, name)] = (done + (not hits), total + 1)
    return result


def table(result: Result) -> list[str]:
    """One row per (corpus, category), one column group per system: R@5, R@10, MRR@10; then abstention, and
    each system's search time against the fusion's, measured in this run."""
    names = result.systems
    head = f"{'corpus':<14}{'category':<12}{'n':>5}  " + "  ".join(f"{name:>22}" for name in names)
    sub = f"{'':<31}  " + "  ".join(f"{'R@5':>6} {'R@10':>6} {'MRR10':>7}" for _ in names)
    lines = [head, sub]
    groups = [CATEGORIES[c] for c in ANSWERABLE] + ["all"]
    for kind in CORPORA:
        for group in groups:
            tallies = [result.tallies.get((kind, group, name), Tally()) for name in names]
            cells = "  ".join(f"{r5:>6.3f} {r10:>6.3f} {mrr:>7.3f}" for r5, r10, mrr in (t.cells() for t in tallies))
            lines.append(f"{kind:<14}{group:<12}{tallies[0].n:>5}  {cells}")
        shares = []
        for name in names:
            done, total = result.empty.get((kind, name), (0, 0))
            shares.append(f"{done / (total or 1):>6.1%} {'':>6} {'':>7}")
        lines.append(f"{kind:<14}{'wrong-mem':<12}{result.empty[(kind, names[0])][1]:>5}  " + "  ".join(shares))
        lost = [result.answerable_empty.get((kind, name), 0) for name in names]
        lines.append(f"{kind:<14}{'ans. empty':<12}{'':>5}  " + "  ".join(f"{x:>6d} {'':>6} {'':>7}" for x in lost))
    fusion = _p50_ms(result.seconds[Mode.HYBRID.value])
    times = "  ".join(
        f"{_p50_ms(result.seconds[name]):>9.3f} ms {_p50_ms(result.seconds[name]) / fusion:>8.1f}x" for name in names
    )
    lines.append(f"{'p50 per search, vs hybrid':<31}  {times}")
    return lines


def _p50_ms(seconds: Sequence[float]) -> float:
    ordered = sorted(seconds)
    return 1000 * ordered[len(ordered) // 2] if ordered else 0.0
