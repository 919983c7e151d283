"""The owner's consolidation items (docs/decisions/0088): the settings (`CONSOLIDATION`) and the latest run the
owner asked for (`CONSOLIDATIONRUN`), both in the workspace's partition, both written by compare-and-set on
their `revision` (absent: revision 0). Ids, flags and times only."""

from __future__ import annotations

from dataclasses import dataclass

from workspace_memory.store import keys
from workspace_memory.store.ports import Item
from workspace_memory.store.record_fields import present


@dataclass(frozen=True)
class ConsolidationSettings:
    """Off by default: a workspace that never set them is not consolidated on a schedule, and filing proposals
    are reviewed (`auto_file` false)."""

    enabled: bool = False
    auto_file: bool = False
    revision: int = 0
    updated_at: str | None = None
    updated_by: str | None = None

    @classmethod
    def of(cls, item: Item | None) -> ConsolidationSettings:
        if item is None:
            return cls()
        return cls(
            enabled=bool(item.get("enabled", False)),
            auto_file=bool(item.get("autoFile", False)),
            revision=int(item.get("revision", 0)),
            updated_at=item.get("updatedAt"),
            updated_by=item.get("updatedBy"),
        )

    def to_item(self, workspace_id: str) -> Item:
        return {
            **keys.as_key(keys.consolidation(workspace_id)),
            **present(
                {
                    "enabled": self.enabled,
                    "autoFile": self.auto_file,
                    "revision": self.revision,
                    "updatedAt": self.updated_at,
                    "updatedBy": self.updated_by,
                }
            ),
        }


@dataclass(frozen=True)
class OwnerRun:
    """The latest on-demand run: its id names its workflow (`consolidation_workflow_id`), so whoever reads the
    item can start that very workflow again, idempotently, if the request that wrote it never did."""

    run_id: str
    requested_by: str
    requested_at: str
    revision: int

    @classmethod
    def of(cls, item: Item | None) -> OwnerRun | None:
        if item is None:
            return None
        return cls(item["runId"], item["requestedBy"], item["requestedAt"], int(item["revision"]))

    def to_item(self, workspace_id: str) -> Item:
        return {
            **keys.as_key(keys.consolidation_latest_run(workspace_id)),
            "runId": self.run_id,
            "requestedBy": self.requested_by,
            "requestedAt": self.requested_at,
            "revision": self.revision,
        }
