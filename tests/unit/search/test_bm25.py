"""BM25 over what the caller may see: bm25s' scores when everything is visible, and scores of the visible
documents that no hidden document can move (issue 17, finding 2: IDF, N and the average length counted
other members' private entries, so the order of one's own results told what those held)."""

from __future__ import annotations

import bm25s
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.depth import examples
from workspace_memory.search.bm25 import VisibleBM25

pytestmark = pytest.mark.unit

WORDS = st.sampled_from([f"w{i}" for i in range(25)])
DOCS = st.lists(st.lists(WORDS, min_size=1, max_size=20), min_size=1, max_size=30)
QUERY = st.lists(WORDS, min_size=1, max_size=5)


@settings(max_examples=examples(60), deadline=None)
@given(corpus=DOCS, query=QUERY)
def test_with_everything_visible_the_scores_are_bm25s_scores(corpus: list[list[str]], query: list[str]) -> None:
    reference = bm25s.BM25()
    reference.index(corpus, show_progress=False)
    ours = VisibleBM25(corpus).scores(query, np.ones(len(corpus), dtype=bool))
    assert np.allclose(ours, reference.get_scores(query), rtol=1e-5, atol=1e-6)


@settings(max_examples=examples(60), deadline=None)
@given(visible=DOCS, hidden=DOCS, query=QUERY, seed=st.integers(0, 2**16))
def test_hidden_documents_move_no_visible_score(
    visible: list[list[str]], hidden: list[list[str]], query: list[str], seed: int
) -> None:
    alone = VisibleBM25(visible).scores(query, np.ones(len(visible), dtype=bool))
    order = np.random.default_rng(seed).permutation(len(visible) + len(hidden))
    mixed = [(visible + hidden)[i] for i in order]
    mask = np.array([i < len(visible) for i in order])
    scores = VisibleBM25(mixed).scores(query, mask)
    assert np.allclose(scores[mask], [alone[i] for i in order if i < len(visible)])
    assert not scores[~mask].any()


def test_no_terms_or_nothing_visible_scores_zero() -> None:
    index = VisibleBM25([["deploy", "friday"], ["rollback"]])
    assert not index.scores([], np.ones(2, dtype=bool)).any()
    assert not index.scores(["deploy"], np.zeros(2, dtype=bool)).any()
    assert not VisibleBM25([[], []]).scores(["deploy"], np.ones(2, dtype=bool)).any()
