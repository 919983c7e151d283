"""The audit event's item: who (a person, or an agent and its turn or key session) did what kind of change to
which ids and versions, when. Ids, numbers, status words and one timestamp: never text, never a hash or a size
of text (the same allowlist discipline as the change feed, docs/architecture.md#the-audit-trail)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from workspace_memory.kernel.terms import ActorKind, AuditKind
from workspace_memory.store import keys
from workspace_memory.store.ports import Item
from workspace_memory.store.record_fields import optional_int, present


@dataclass(frozen=True)
class Target:
    """One thing a change touched: its kind, its id and, where it has one, the version or revision it made."""

    kind: AuditKind
    id: str
    version: int | None = None

    def to_map(self) -> dict[str, Any]:
        return present({"kind": self.kind.value, "id": self.id, "version": self.version})

    @classmethod
    def from_map(cls, value: dict[str, Any]) -> Target:
        return cls(AuditKind(value["kind"]), str(value["id"]), optional_int(value.get("version")))


@dataclass(frozen=True)
class AuditRecord:
    """One transaction, as the audit tells it: the first target's kind and the op say what it was."""

    workspace_id: str
    at_ms: int
    tail: str
    kind: AuditKind
    op: str
    actor: str | None
    actor_kind: ActorKind
    targets: tuple[Target, ...]
    ttl: int
    admission_id: str | None = None
    """The turn's admission, for an agent's change in a turn or a turn's start (its `POST …/turns` answer names it)."""
    key_session: str | None = None

    @property
    def key(self) -> keys.Key:
        return keys.audit(self.workspace_id, self.at_ms, self.tail)

    def to_item(self) -> Item:
        return {
            **keys.as_key(self.key),
            **present(
                {
                    "kind": self.kind.value,
                    "op": self.op,
                    "actor": self.actor,
                    "actorKind": self.actor_kind.value,
                    "admissionId": self.admission_id,
                    "keySession": self.key_session,
                    "targets": [target.to_map() for target in self.targets],
                    "atMs": self.at_ms,
                    "ttl": self.ttl,
                }
            ),
        }

    @classmethod
    def from_item(cls, item: Item) -> AuditRecord:
        _, _, rest = item["sk"].partition(keys.AUDIT_PREFIX)
        return cls(
            workspace_id=keys.workspace_of(item["pk"]),
            at_ms=int(item["atMs"]),
            tail=rest.split("#", 1)[1],
            kind=AuditKind(item["kind"]),
            op=item["op"],
            actor=item.get("actor"),
            actor_kind=ActorKind(item["actorKind"]),
            targets=tuple(Target.from_map(target) for target in item.get("targets", [])),
            ttl=int(item["ttl"]),
            admission_id=item.get("admissionId"),
            key_session=item.get("keySession"),
        )

    def expired(self, now: float) -> bool:
        """Past its retention: TTL deletion lags expiry, so every read judges it."""
        return self.ttl <= now
