"""The pure hybrid engine: fusion arithmetic, visibility before ranking, incremental rebuilds."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

from workspace_memory.search.embedders import LocalEmbedder
from workspace_memory.search.engine import (
    RRF_K,
    HybridIndex,
    Mode,
    SearchDoc,
    fuse,
    pack_vector,
    shared_ranks,
    tokenize,
    top,
    unpack_vector,
)


def doc(entry_id: str, title: str, *, owner: str = "-", scope: str = "workspace", revision: int = 1) -> SearchDoc:
    return SearchDoc(entry_id, revision, scope, owner, "fact", None, title, "", "", 0.0, None)


class CountingEmbedder:
    """The real local model, counting the texts it is asked to embed."""

    def __init__(self) -> None:
        self.inner = LocalEmbedder()
        self.texts: list[str] = []

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    def embed(self, texts: Sequence[str]) -> Any:
        self.texts.extend(texts)
        return self.inner.embed(texts)


def test_fusion_adds_reciprocal_ranks() -> None:
    fused = fuse(4, [np.array([3, 1]), np.array([1, 2])], [1.0, 1.0])
    assert fused[1] == pytest.approx(1 / (RRF_K + 2) + 1 / (RRF_K + 1))
    assert fused[3] == pytest.approx(1 / (RRF_K + 1))
    assert fused[2] == pytest.approx(1 / (RRF_K + 2))
    assert fused[0] == 0


def test_fusion_weighs_each_list() -> None:
    fused = fuse(4, [np.array([3]), np.array([1])], [1.5, 1.0])
    assert fused[3] == pytest.approx(1.5 / (RRF_K + 1))
    assert fused[1] == pytest.approx(1.0 / (RRF_K + 1))


def test_top_takes_the_best_positive_scores_with_ties_by_entry_id() -> None:
    scores = np.array([0.2, 0.5, 0.0, 0.5, 0.1, 0.5])
    ids = np.array(["en_f", "en_e", "en_d", "en_c", "en_b", "en_a"])
    assert top(scores, 2, ids) == [5, 3]
    assert top(scores, 4, ids) == [5, 3, 1, 0]
    assert top(scores, 9, ids) == [5, 3, 1, 0, 4]


def test_equal_scores_go_to_the_more_read_entry_first_then_by_entry_id() -> None:
    scores = np.array([0.2, 0.5, 0.0, 0.5, 0.1, 0.5])
    ids = np.array(["en_f", "en_e", "en_d", "en_c", "en_b", "en_a"])
    asked: list[list[str]] = []

    def reads(entry_ids: Sequence[str]) -> dict[str, int]:
        asked.append(list(entry_ids))
        return {"en_e": 7, "en_c": 7, "en_a": 2}

    assert top(scores, 2, ids, reads) == [3, 1]  # en_c and en_e read 7 times, before en_a; then by id
    assert top(scores, 9, ids, reads) == [3, 1, 5, 0, 4]
    assert asked == [["en_a", "en_c", "en_e"]] * 2  # only the tied entries are asked about


def test_reads_are_not_asked_for_when_no_scores_tie() -> None:
    scores = np.array([0.2, 0.5, 0.3])
    ids = np.array(["en_c", "en_b", "en_a"])

    def reads(entry_ids: Sequence[str]) -> dict[str, int]:
        raise AssertionError(f"asked for {list(entry_ids)}")

    assert top(scores, 2, ids, reads) == [1, 2]


def test_an_entry_never_read_ranks_after_a_read_one_of_the_same_score() -> None:
    scores = np.array([0.4, 0.4])
    ids = np.array(["en_a", "en_b"])
    assert top(scores, 2, ids, lambda _ids: {"en_b": 1}) == [1, 0]
    assert top(scores, 2, ids) == [0, 1]  # no counts: the entry id alone, as before


def test_equal_scores_share_a_rank_so_equal_documents_fuse_to_equal_scores() -> None:
    assert shared_ranks(np.array([0.9, 0.5, 0.5, 0.1])).tolist() == [1, 2, 2, 4]
    fused = fuse(3, [np.array([2, 0, 1])], [1.0], [shared_ranks(np.array([0.7, 0.7, 0.2]))])
    assert fused[2] == fused[0] == pytest.approx(1 / (RRF_K + 1))
    assert fused[1] == pytest.approx(1 / (RRF_K + 3))


@pytest.mark.parametrize("mode", [Mode.HYBRID, Mode.BM25, Mode.EMBEDDING])
def test_two_entries_the_search_cannot_tell_apart_go_to_the_more_read_first(mode: Mode) -> None:
    docs = [doc("en_a", "We deploy on Fridays"), doc("en_b", "We deploy on Fridays"), doc("en_c", "Pager rotation")]
    index = HybridIndex(docs, LocalEmbedder())
    hits = index.search("when do we deploy", 2, mode=mode, reads=lambda _ids: {"en_b": 3, "en_c": 9})
    assert [h.entry_id for h in hits] == ["en_b", "en_a"]
    assert hits[0].score == hits[1].score
    assert [h.entry_id for h in index.search("when do we deploy", 2, mode=mode)] == ["en_a", "en_b"]  # by id


@pytest.mark.parametrize("k", [1, 3, 7, 40])
def test_top_agrees_with_a_full_sort(k: int) -> None:
    rng = np.random.default_rng(k)
    scores = rng.integers(0, 6, size=60) / 4  # many ties, some zeros
    ids = np.array([f"en_{rng.integers(0, 10**6):07d}" for _ in scores])
    expected = sorted((i for i in range(60) if scores[i] > 0), key=lambda i: (-scores[i], ids[i]))[:k]
    assert top(scores, k, ids) == expected


def test_question_words_and_pronouns_are_stop_words() -> None:
    assert tokenize(["What did you and we do when our deploy failed?"]) == [["deploy", "fail"]]


def test_bm25_ranks_the_key_words_too() -> None:
    keyed = SearchDoc("en_a", 1, "workspace", "-", "rule", "billing/currency", "Invoices in euros", "", "", 0.0, None)
    index = HybridIndex([keyed, doc("en_b", "the vault rotates secrets")], LocalEmbedder())
    assert [h.entry_id for h in index.search("currency", 5, mode=Mode.BM25)] == ["en_a"]


def test_a_hidden_document_never_ranks() -> None:
    docs = [doc("en_a", "deploy on tuesdays", owner="u1", scope="member"), doc("en_b", "deploy freeze in december")]
    index = HybridIndex(docs, LocalEmbedder())
    for mode in Mode:
        hits = index.search("deploy", 5, mask=index.columns.scope != "member", mode=mode)
        assert [h.entry_id for h in hits] == ["en_b"]


def test_bm25_alone_finds_only_shared_words() -> None:
    index = HybridIndex(
        [doc("en_a", "invoices are sent in euros"), doc("en_b", "the vault rotates secrets")], LocalEmbedder()
    )
    assert [h.entry_id for h in index.search("euros", 5, mode=Mode.BM25)] == ["en_a"]
    assert index.search("zebra", 5, mode=Mode.BM25) == []


def test_a_rebuild_embeds_only_new_revisions() -> None:
    embedder = CountingEmbedder()
    first = HybridIndex([doc("en_a", "alpha release notes"), doc("en_b", "beta rollout plan")], embedder)
    assert len(embedder.texts) == 2
    second = first.rebuilt([doc("en_a", "alpha release notes"), doc("en_b", "beta rollout plan v2", revision=2)])
    assert embedder.texts[2:] == ["beta rollout plan v2\n\n"]
    assert [d.revision for d in second.docs] == [1, 2]
    assert second.search("rollout", 1, mode=Mode.BM25)[0].revision == 2


def test_a_packed_vector_keeps_its_direction() -> None:
    vector = LocalEmbedder().embed(["the deploy window"])[0]
    back = unpack_vector(pack_vector(vector))
    assert float(np.dot(vector, back)) == pytest.approx(1.0, abs=1e-3)


NO_TERMS = ["the", "a", "9", "\x00", "!!!", "the of and", "é"]
"""Queries the tokenizer reduces to nothing: stop words, one letter, digits, control and punctuation characters."""


@pytest.mark.parametrize("query", NO_TERMS)
def test_a_query_of_no_terms_ranks_by_embeddings_alone(query: str) -> None:
    index = HybridIndex([doc("en_a", "deploy on tuesdays"), doc("en_b", "the vault rotates secrets")], LocalEmbedder())
    assert index.search(query, 5, mode=Mode.BM25) == []
    hybrid, embedding = index.search(query, 5), index.search(query, 5, mode=Mode.EMBEDDING)
    assert [h.entry_id for h in hybrid] == [h.entry_id for h in embedding]


def test_a_corpus_of_no_terms_is_searchable() -> None:
    index = HybridIndex([doc("en_a", "the"), doc("en_b", "42")], LocalEmbedder())
    for mode in Mode:
        assert all(h.entry_id in {"en_a", "en_b"} for h in index.search("the", 5, mode=mode))
    assert index.search("deploy", 5, mode=Mode.BM25) == []
    grown = index.rebuilt([*index.docs, doc("en_c", "deploy on tuesdays")])
    assert [h.entry_id for h in grown.search("deploy", 5, mode=Mode.BM25)] == ["en_c"]
