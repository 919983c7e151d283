"""How two entries relate, judged from their words and vectors (docs/decisions/0086): the same statement twice
(`duplicate`), two claims about one subject that say different things (`conflict`), or neither.

The subject is what an entry is about: its title and its key's words. The claim is what it says: its summary and
body. Two entries share a subject when their subject words mostly overlap (or their keys are equal) and their
vectors agree that the texts are near; they are duplicates when their claims are near-identical too, and in
conflict when each claim says something the other does not. One entry's claim that holds the other's whole is a
restatement with more detail, which is a duplicate (the fuller one is kept), never a conflict.

Pure and deterministic: the write-time check answers `possibleConflicts` from it, and consolidation uses it to
pick the pairs a model then judges (the `scripted` provider judges by this same rule)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum

Tokenizer = Callable[[Sequence[str]], list[list[str]]]
"""The search tokenizer's shape (`search.engine.tokenize`): texts in, one word list per text out."""

SUBJECT_OVERLAP = 0.5
"""Share of the two subjects' words in common (Jaccard) from which they are about one thing."""
NEAR_COSINE = 0.5
"""The embedding's evidence: below this the two texts are not near, whatever their titles share."""
SAME_CLAIM = 0.7
"""Share of the two claims' words in common from which they say the same thing."""


class Relation(StrEnum):
    DUPLICATE = "duplicate"
    CONFLICT = "conflict"
    UNRELATED = "unrelated"


@dataclass(frozen=True)
class Words:
    """An entry as the rule sees it: the tokenized words of its subject and of its claim, and its key."""

    subject: frozenset[str]
    claim: frozenset[str]
    key: str | None = None

    @classmethod
    def of(cls, title: str, summary: str, body: str, key: str | None, tokenize: Tokenizer) -> Words:
        key_words = "" if key is None else key.replace("/", " ").replace("-", " ").replace("_", " ")
        subject, claim = tokenize([f"{title} {key_words}", f"{summary}\n{body}"])
        return cls(frozenset(subject), frozenset(claim), key)


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    union = a | b
    return len(a & b) / len(union) if union else 0.0


def same_subject(a: Words, b: Words, cosine: float) -> bool:
    if cosine < NEAR_COSINE:
        return False
    if a.key is not None and a.key == b.key:
        return True
    return bool(a.subject and b.subject) and _jaccard(a.subject, b.subject) >= SUBJECT_OVERLAP


def relation(a: Words, b: Words, cosine: float) -> Relation:
    """How `a` and `b` relate, `cosine` being their vectors' similarity (symmetric in `a` and `b`)."""
    if not same_subject(a, b, cosine):
        return Relation.UNRELATED
    if _jaccard(a.claim, b.claim) >= SAME_CLAIM:  # words, not the cosine: the embedding barely sees numbers
        return Relation.DUPLICATE
    if a.claim <= b.claim or b.claim <= a.claim:
        return Relation.DUPLICATE  # one restates the other with more detail
    return Relation.CONFLICT
