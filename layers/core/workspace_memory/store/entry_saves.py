"""An agent's entry write by (admission, `Idempotency-Key`) (`ENTRYSAVE#{hash}`): the marker its transaction
creates, `pending`, and then `done` with the answer a replay hands back (ids, revision, outcome; never text)."""

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

    def to_map(self) -> dict[str, Any]:
        answer: dict[str, Any] = {"outcome": self.outcome.value, "superseded": self.superseded}
        for name, value in (
            ("entryId", self.entry_id),
            ("revision", self.revision),
            ("candidateId", self.candidate_id),
        ):
            if value is not None:
                answer[name] = value
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
        )


@dataclass(frozen=True)
class SaveMarker:
    """`outcome` is what the write commits as (`candidate`: it proposes); `answer`, once recorded, what it
    answered."""

    key: keys.Key
    admission_id: str
    request_hash: str
    outcome: Outcome
    candidate: bool
    created_at: str
    ttl: int
    answer: SavedAnswer | None = None

    @classmethod
    def from_item(cls, item: Item) -> SaveMarker:
        answer = item.get("answer")
        return cls(
            key=(item["pk"], item["sk"]),
            admission_id=item["admissionId"],
            request_hash=item["requestHash"],
            outcome=Outcome(item["outcome"]),
            candidate=bool(item.get("candidate")),
            created_at=item["createdAt"],
            ttl=int(item["ttl"]),
            answer=None if answer is None else SavedAnswer.from_map(answer),
        )

    def to_item(self) -> Item:
        item: Item = {
            **keys.as_key(self.key),
            "admissionId": self.admission_id,
            "requestHash": self.request_hash,
            "status": "pending" if self.answer is None else "done",
            "outcome": self.outcome.value,
            "candidate": self.candidate,
            "createdAt": self.created_at,
            "ttl": self.ttl,
        }
        if self.answer is not None:
            item["answer"] = self.answer.to_map()
        return item
