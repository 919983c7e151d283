"""How two entries relate (search/claims.py), with the real tokenizer and local model: the relation the
write-time check answers and consolidation proposes from."""

from __future__ import annotations

import numpy as np
import pytest

from workspace_memory.search.claims import Relation, Words, relation
from workspace_memory.search.embedders import LocalEmbedder
from workspace_memory.search.engine import embedding_text, tokenize

Entry = tuple[str, str, str, str | None]


@pytest.fixture(scope="module")
def embedder() -> LocalEmbedder:
    return LocalEmbedder()


def related(embedder: LocalEmbedder, a: Entry, b: Entry) -> tuple[Relation, Relation]:
    va, vb = embedder.embed([embedding_text(*a[:3]), embedding_text(*b[:3])])
    cosine = float(np.dot(va, vb))
    wa, wb = Words.of(*a, tokenize), Words.of(*b, tokenize)
    return relation(wa, wb, cosine), relation(wb, wa, cosine)


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        (
            ("Deploy window", "Deploys happen on Tuesday", "We ship every Tuesday afternoon.", None),
            ("Deploy window", "Deploys happen on Friday", "We ship every Friday morning.", None),
            Relation.CONFLICT,
        ),
        (
            ("Database", "We use Postgres 15 for the main database", "", None),
            ("Database", "The main database is MySQL 8", "", None),
            Relation.CONFLICT,
        ),
        (
            ("Deploy window", "Deploys happen on Tuesday", "We ship every Tuesday afternoon.", None),
            ("Deployment window", "Deploys happen on Tuesdays", "We ship every Tuesday afternoon.", None),
            Relation.DUPLICATE,
        ),
        (
            ("Deploy window", "Deploys happen on Tuesday", "", None),
            ("Deploy window", "Deploys happen on Tuesday", "After the standup, never after 4pm.", None),
            Relation.DUPLICATE,
        ),
        (
            ("Standup time", "Standup is at 10:00", "", None),
            ("Standup time", "Standup is at 9:30", "", None),
            Relation.CONFLICT,  # the vectors barely tell the times apart; the words do
        ),
        (
            ("Release freeze", "No releases during the December holidays", "", None),
            ("Office party", "The office party is on December 18", "", None),
            Relation.UNRELATED,
        ),
    ],
)
def test_the_relation_of_two_entries_is_judged_from_subject_and_claim_both_ways(
    embedder: LocalEmbedder, a: Entry, b: Entry, expected: Relation
) -> None:
    assert related(embedder, a, b) == (expected, expected)


def test_equal_keys_name_one_subject_whatever_the_titles_say(embedder: LocalEmbedder) -> None:
    a = ("Deploy window", "Deploys happen on Tuesday", "", "ops/deploy-day")
    b = ("When we ship", "Deploys happen on Thursday", "", "ops/deploy-day")
    assert related(embedder, a, b)[0] is Relation.CONFLICT
    assert related(embedder, a, (*b[:3], None))[0] is Relation.UNRELATED


def test_titles_alike_but_texts_far_apart_are_not_one_subject() -> None:
    a = Words(frozenset({"plan"}), frozenset({"buy", "milk"}))
    b = Words(frozenset({"plan"}), frozenset({"migrat", "cluster"}))
    assert relation(a, b, 0.49) is Relation.UNRELATED
    assert relation(a, b, 0.5) is Relation.CONFLICT
