"""An import's record (`IMPORT#{id}`, decisions/0069): which export it restores, who asked, its status, the steps
applied (each exactly once) and the counts of what they wrote. Ids, names and numbers only; it keeps the staged
files' `ttl`, so an import nobody finishes expires with them."""

from __future__ import annotations

from dataclasses import dataclass, field

from workspace_memory.kernel.terms import ImportStatus
from workspace_memory.store import keys
from workspace_memory.store.ports import Item
from workspace_memory.store.record_fields import present

COUNTED = ("versions", "chains", "revisions", "members")
"""What an import counts as it applies: document versions, entry chains and revisions, members."""


@dataclass(frozen=True)
class ImportRecord:
    import_id: str
    workspace_id: str
    source_workspace: str
    source_export: str
    requested_by: str
    status: ImportStatus
    created_at: str
    ttl: int
    completed_at: str | None = None
    applied: frozenset[str] = frozenset()
    counts: dict[str, int] = field(default_factory=dict)

    @classmethod
    def of(cls, item: Item | None) -> ImportRecord | None:
        if item is None:
            return None
        return cls(
            import_id=item["importId"],
            workspace_id=keys.workspace_of(item["pk"]),
            source_workspace=item["sourceWorkspace"],
            source_export=item["sourceExport"],
            requested_by=item["requestedBy"],
            status=ImportStatus(item["status"]),
            created_at=item["createdAt"],
            ttl=int(item["ttl"]),
            completed_at=item.get("completedAt"),
            applied=frozenset(item.get("applied", ())),
            counts={name: int(item.get(name, 0)) for name in COUNTED},
        )

    def to_item(self) -> Item:
        """A new import: nothing applied yet (`applied` is a string set, which DynamoDB stores only non-empty)."""
        return {
            **keys.as_key(keys.import_(self.workspace_id, self.import_id)),
            **present(
                {
                    "importId": self.import_id,
                    "sourceWorkspace": self.source_workspace,
                    "sourceExport": self.source_export,
                    "requestedBy": self.requested_by,
                    "status": self.status.value,
                    "createdAt": self.created_at,
                    "ttl": self.ttl,
                    "completedAt": self.completed_at,
                }
            ),
            **{name: 0 for name in COUNTED},
        }

    def expired(self, now: float) -> bool:
        return self.status is ImportStatus.RUNNING and self.ttl <= now
