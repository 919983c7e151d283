"""Warm search time at one large index: every LoCoMo turn in one corpus (5,882 entries), every answerable
question asked once of the fusion and of the peer, in the same run, after every vector is computed."""

from __future__ import annotations

import time
from collections.abc import Sequence

from scripts.eval import locomo, peer
from scripts.eval.locomo_data import ANSWERABLE, Conversation
from workspace_memory.search.engine import Embedder, SearchDoc


def _p50_ms(ranker: locomo.Ranker, questions: Sequence[str]) -> float:
    times = []
    for question in questions:
        start = time.perf_counter()
        ranker(question, 10)
        times.append(time.perf_counter() - start)
    return 1000 * sorted(times)[len(times) // 2]


def table(conversations: Sequence[Conversation], embedder: Embedder) -> list[str]:
    docs: list[SearchDoc] = []
    for conversation in conversations:
        docs.extend(locomo.corpus(conversation, "turns")[0])
    questions = [q.question for c in conversations for q in c.questions if q.category in ANSWERABLE]
    embedder.embed(questions)
    built = locomo.rankers(docs, embedder)
    fusion = _p50_ms(built["hybrid"], questions)
    lines = [f"warm search at {len(docs):,} entries, {len(questions):,} questions: hybrid p50 {fusion:.3f} ms"]
    if peer.available():
        other = _p50_ms(built[locomo.PEER], questions)
        lines.append(f"{locomo.PEER} p50 {other:.3f} ms: {other / fusion:.1f}x the fusion's")
    return lines
