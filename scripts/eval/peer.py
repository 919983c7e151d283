"""The peer the search is measured against: LangGraph's `InMemoryStore` with its semantic index, over the same
texts with the same embedder, as a team would use it instead (an optional dependency group, `peers`: never in
Lambda, never in the default sync; `make eval` installs it).

It ranks by cosine alone (no lexical list, no floor), so it answers every query with `k` results.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from workspace_memory.search.engine import Embedder, SearchDoc, embedding_text

NAMESPACE = ("eval",)


def available() -> bool:
    try:
        import langgraph.store.memory  # noqa: F401
    except ImportError:
        return False
    return True


class LangGraphStore:
    """One store per corpus; `search` answers entry ids, best first."""

    def __init__(self, docs: Sequence[SearchDoc], embedder: Embedder) -> None:
        from langgraph.store.base import PutOp
        from langgraph.store.memory import InMemoryStore

        self._embedder = embedder
        dims = int(embedder.embed(["dimension probe"]).shape[1])
        self._store = InMemoryStore(index={"dims": dims, "embed": self._embed, "fields": ["text"]})
        # Keyed by position: a corpus may repeat an id (LoCoMo does), and the store would keep one of them. A
        # text repeated within one batch misaligns the store's vectors (langgraph 1.2: one vector per distinct
        # text, zipped with every key), so each repeat is put on its own.
        self._ids = [d.entry_id for d in docs]
        texts = [embedding_text(d.title, d.summary, d.body) for d in docs]
        first: dict[str, int] = {}
        for n, text in enumerate(texts):
            first.setdefault(text, n)
        self._store.batch([PutOp(NAMESPACE, str(n), {"text": text}) for text, n in first.items()])
        for n, text in enumerate(texts):
            if first[text] != n:
                self._store.put(NAMESPACE, str(n), {"text": text})

    def _embed(self, texts: Sequence[str]) -> list[list[float]]:
        vectors: Any = self._embedder.embed(list(texts))
        rows: list[list[float]] = vectors.tolist()
        return rows

    def search(self, query: str, k: int) -> list[str]:
        return [self._ids[int(item.key)] for item in self._store.search(NAMESPACE, query=query, limit=k)]
