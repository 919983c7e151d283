"""Items of an export (docs/decisions/0068): the request (`EXPORT#{id}`: scope, requester, status, expiry) and
the chunks of its sealed files (`EXPORTPART#{id}#{file}#{chunk}`: one slice each of a file's single sealed
message). Both carry the export's `ttl`, so an archive nobody downloads expires on its own."""

from __future__ import annotations

from dataclasses import dataclass

from workspace_memory.kernel.terms import ExportFile, ExportScope, ExportStatus
from workspace_memory.store import keys
from workspace_memory.store.ports import Item
from workspace_memory.store.record_fields import present


@dataclass(frozen=True)
class ExportRecord:
    export_id: str
    workspace_id: str
    scope: ExportScope
    requested_by: str
    status: ExportStatus
    created_at: str
    ttl: int
    downloaded_at: str | None = None

    @classmethod
    def of(cls, item: Item | None) -> ExportRecord | None:
        if item is None:
            return None
        return cls(
            export_id=item["exportId"],
            workspace_id=keys.workspace_of(item["pk"]),
            scope=ExportScope(item["scope"]),
            requested_by=item["requestedBy"],
            status=ExportStatus(item["status"]),
            created_at=item["createdAt"],
            ttl=int(item["ttl"]),
            downloaded_at=item.get("downloadedAt"),
        )

    def to_item(self) -> Item:
        return {
            **keys.as_key(keys.export(self.workspace_id, self.export_id)),
            **present(
                {
                    "exportId": self.export_id,
                    "scope": self.scope.value,
                    "requestedBy": self.requested_by,
                    "status": self.status.value,
                    "createdAt": self.created_at,
                    "ttl": self.ttl,
                    "downloadedAt": self.downloaded_at,
                }
            ),
        }

    def expired(self, now: float) -> bool:
        """Past its `ttl`: gone, whether or not DynamoDB's TTL deleter has removed it yet."""
        return self.ttl <= now


@dataclass(frozen=True)
class ExportChunk:
    """Chunk `number` of the `chunks` of file `file`'s ciphertext (every chunk of one write names the same
    `chunks`, so a reader never mixes in a chunk an earlier, longer attempt left behind)."""

    export_id: str
    file: ExportFile
    number: int
    chunks: int
    part: bytes
    ttl: int

    @classmethod
    def from_item(cls, item: Item) -> ExportChunk:
        _, export_id, file, number = str(item["sk"]).split("#")
        return cls(export_id, ExportFile(file), int(number), int(item["chunks"]), bytes(item["part"]), int(item["ttl"]))

    def to_item(self, workspace_id: str) -> Item:
        return {
            **keys.as_key(keys.export_part(workspace_id, self.export_id, self.file.value, self.number)),
            "exportId": self.export_id,
            "chunks": self.chunks,
            "part": self.part,
            "ttl": self.ttl,
        }
