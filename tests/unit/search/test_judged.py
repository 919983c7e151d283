"""Search hits judged by what they cite (decisions/0081), over a fake ranking: a hidden hit is dropped and the
next best take its place until `k` are shown or the ranking runs out, each hit judged once, `hidden` counting
what ranked above the last one shown; the snapshot row keeps what a revision cites; selective recall marks a
changed one."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.depth import examples
from workspace_memory.entries.model import Source
from workspace_memory.kernel.terms import CitationKind, CitationState
from workspace_memory.search import search_snapshot
from workspace_memory.search.engine import Hit, SearchDoc
from workspace_memory.search.entry_search import Found, SearchResult
from workspace_memory.search.judged import judged
from workspace_memory.turns.recall import build_selection

pytestmark = pytest.mark.unit

HIDDEN, CHANGED, OK = CitationState.HIDDEN, CitationState.CHANGED, CitationState.OK


def doc(n: int) -> SearchDoc:
    return SearchDoc(f"en_{n}", 1, "workspace", "u1", "fact", None, f"t{n}", "s", "b", 0.0, None)


class Ranking:
    """A fixed ranking of `states` (position n is the n-th best hit) that records what it is asked."""

    def __init__(self, states: Sequence[CitationState | None]) -> None:
        self.states = list(states)
        self.docs = [doc(n) for n in range(len(states))]
        self.asked: list[int] = []
        self.judged: list[str] = []

    def rank(self, n: int) -> list[Hit]:
        self.asked.append(n)
        return [Hit(d.entry_id, 1, 1.0 / (i + 1), i) for i, d in enumerate(self.docs[:n])]

    def judge(self, docs: Sequence[SearchDoc]) -> list[CitationState | None]:
        self.judged.extend(d.entry_id for d in docs)
        return [self.states[int(d.entry_id.removeprefix("en_"))] for d in docs]

    def run(self, k: int, limit: int = 100) -> tuple[list[tuple[int, CitationState | None]], int]:
        shown, hidden = judged(self.rank, self.docs, k, self.judge, limit)
        return [(hit.position, state) for hit, state in shown], hidden


def test_hits_that_cite_nothing_are_ranked_and_judged_once() -> None:
    ranking = Ranking([None] * 8)
    assert ranking.run(3) == ([(0, None), (1, None), (2, None)], 0)
    assert ranking.asked == [3]
    assert ranking.judged == ["en_0", "en_1", "en_2"]  # the hits answered, never the rest of the corpus


def test_a_hidden_hit_makes_room_for_the_next_best_and_is_counted() -> None:
    ranking = Ranking([OK, HIDDEN, CHANGED, HIDDEN, None, None, HIDDEN])
    assert ranking.run(3) == ([(0, OK), (2, CHANGED), (4, None)], 2)
    assert ranking.asked == [3, 6]
    assert sorted(ranking.judged) == [f"en_{n}" for n in range(6)]  # each once; en_6 ranked below: never judged


def test_when_the_ranking_runs_out_what_is_left_is_answered() -> None:
    ranking = Ranking([HIDDEN, OK, HIDDEN])
    assert ranking.run(5) == ([(1, OK)], 2)
    assert ranking.asked == [5]  # three hits for five asked: there is no more to rank


def test_no_more_than_the_limit_is_judged() -> None:
    ranking = Ranking([HIDDEN] * 50 + [OK])
    assert ranking.run(2, limit=10) == ([], 10)
    assert ranking.asked == [2, 4, 8, 10]
    assert len(ranking.judged) == 10


@settings(max_examples=examples(200), deadline=None)
@given(
    st.lists(st.sampled_from([None, OK, CHANGED, HIDDEN]), max_size=40),
    st.integers(1, 20),
    st.integers(20, 60),
)
def test_the_answer_is_the_best_k_not_hidden_of_the_ranking(
    states: list[CitationState | None], k: int, limit: int
) -> None:
    """The reference: judge the whole ranking, drop the hidden, take the first `k`; `hidden` counts those dropped
    above the last kept (every one judged, when fewer than `k` are kept)."""
    ranking = Ranking(states)
    shown, hidden = ranking.run(k, limit)
    judged_count = min(len(states), limit)
    kept = [(n, s) for n, s in enumerate(states[:judged_count]) if s is not HIDDEN][:k]
    assert shown == kept
    upto = kept[-1][0] + 1 if len(kept) == k else judged_count
    assert hidden == states[:upto].count(HIDDEN)
    assert len(ranking.judged) == len(set(ranking.judged)) <= limit


def test_the_snapshot_row_keeps_what_a_revision_cites() -> None:
    sources = (
        Source(CitationKind.DOCUMENT_VERSION, "3", "a" * 64, "line 2"),
        Source(CitationKind.ENTRY, "en_9", "b" * 64),
    )
    citing = SearchDoc("en_1", 2, "workspace", "u1", "fact", "ops/x", "t", "s", "b", 1.0, None, sources=sources)
    for kept in (citing, doc(2)):
        assert search_snapshot._doc(search_snapshot._row(kept)) == kept


def test_selective_recall_marks_a_hit_whose_cited_text_changed() -> None:
    found = Found(
        [
            SearchResult("en_1", 1, "Pager", "Lisbon holds it", 0.5, "Since May.", source_state=CHANGED),
            SearchResult("en_2", 1, "Deploys", "on Tuesdays", 0.4, "", source_state=OK),
        ],
        hidden=2,
    )
    selection = build_selection(found)
    lines = selection.text.splitlines()
    assert lines[1:] == [
        "- Pager — Lisbon holds it [source changed] [en_1]",
        "  Since May.",
        "- Deploys — on Tuesdays [en_2]",
    ]
    assert selection.hidden == 2
    assert selection.recalled == (("en_1", 1), ("en_2", 1))
