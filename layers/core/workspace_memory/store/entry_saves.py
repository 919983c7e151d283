"""An agent's entry write by (admission, `Idempotency-Key`) (`ENTRYSAVE#{hash}`): the marker its transaction
creates, holding the answer a replay hands back (ids, revision, outcome; never text)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from workspace_memory.kernel.terms import Outcome
from workspace_memory.store import keys
from workspace_memory.store.ports import Item


@dataclass(frozen=True)
class SavedAnswer:
    outcome: Outcome
    superseded: bool = False
    entry_id: str | None = None
    revision: int | None = None
    candidate_id: str | None = None
    possible_conflicts: tuple[str, ...] = ()
    """What the write may contradict, `entryId@revision` each (decisions/0087)."""

    def to_map(self) -> dict[str, Any]:
        answer: dict[str, Any] = {"outcome": self.outcome.value, "superseded": self.superseded}
        for name, value in (
            ("entryId", self.entry_id),
            ("revision", self.revision),
            ("candidateId", self.candidate_id),
        ):
            if value is not None:
                answer[name] = value
        if self.possible_conflicts:
            answer["possibleConflicts"] = list(self.possible_conflicts)
        return answer

    @classmethod
    def from_map(cls, answer: dict[str, Any]) -> SavedAnswer:
        revision = answer.get("revision")
        return cls(
            Outcome(answer["outcome"]),
            superseded=bool(answer.get("superseded")),
            entry_id=answer.get("entryId"),
            revision=None if revision is None else int(revision),
            candidate_id=answer.get("candidateId"),
            possible_conflicts=tuple(answer.get("possibleConflicts", ())),
        )


@dataclass(frozen=True)
class SaveMarker:
    """Created by the write's own transaction, its answer inside: a retry after any crash hands back the ids the
    first commit stored, and there is no second write to lose or to land after a workspace's tombstone."""

    key: keys.Key
    admission_id: str
    request_hash: str
    answer: SavedAnswer
    created_at: str
    ttl: int

    @classmethod
    def from_item(cls, item: Item) -> SaveMarker:
        return cls(
            key=(item["pk"], item["sk"]),
            admission_id=item["admissionId"],
            request_hash=item["requestHash"],
            answer=SavedAnswer.from_map(item["answer"]),
            created_at=item["createdAt"],
            ttl=int(item["ttl"]),
        )

    def to_item(self) -> Item:
        return {
            **keys.as_key(self.key),
            "admissionId": self.admission_id,
            "requestHash": self.request_hash,
            "answer": self.answer.to_map(),
            "createdAt": self.created_at,
            "ttl": self.ttl,
        }
