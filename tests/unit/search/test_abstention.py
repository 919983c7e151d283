"""The fusion's honest "nothing relevant" (search/abstention.py) on the quality set's own entries and the real
local model: a query about nothing answers nothing, a paraphrase and an identifier still answer, and what the
caller may not read cannot make her search answer."""

from __future__ import annotations

import pytest

from scripts.search_quality import build_index, load_entries
from workspace_memory.search.embedders import LocalEmbedder
from workspace_memory.search.engine import HybridIndex, Mode, SearchDoc


@pytest.fixture(scope="module")
def index() -> HybridIndex:
    return build_index(load_entries(), LocalEmbedder())


def test_a_query_about_nothing_in_memory_finds_nothing(index: HybridIndex) -> None:
    query = "recipe for the summer barbecue"
    assert index.search(query, 5) == []
    assert index.search(query, 5, mode=Mode.BM25)  # a stray word matched: only the gate keeps it out


@pytest.mark.parametrize(
    ("query", "target"),
    [
        ("can we put out updates over the christmas holidays", "deploy-freeze"),  # near, few words held
        ("INC-2317", "inc-2317"),  # far from every vector, held whole
    ],
)
def test_a_query_one_signal_vouches_for_still_answers(index: HybridIndex, query: str, target: str) -> None:
    assert target in [h.entry_id for h in index.search(query, 5)]


def test_what_the_caller_may_not_read_cannot_make_her_search_answer(index: HybridIndex) -> None:
    private = SearchDoc(
        "en_private", 1, "member", "u2", "fact", None, "Summer barbecue recipe", "", "grill the corn first", 0.0, None
    )
    grown = index.rebuilt([*index.docs, private])
    query = "recipe for the summer barbecue"
    assert [h.entry_id for h in grown.search(query, 1)] == ["en_private"]  # every entry admitted
    others = grown.columns.scope != "member"
    assert grown.search(query, 5, mask=others) == []
