"""The export's changes (`store/changes/exports.py`) in DynamoDB's dialect: the status moves of an `EXPORT#`
item, each judged on the status it moves from and on its `ttl` (an expired export is gone, whether or not the
TTL deleter has removed it yet)."""

from __future__ import annotations

from typing import Any

from workspace_memory.adapters.dynamo_import_changes import import_to_dynamo
from workspace_memory.store import changes as ch
from workspace_memory.store import keys

_NAMES = {"#status": "status", "#ttl": "ttl"}


def export_to_dynamo(change: ch.Change) -> dict[str, Any]:
    match change:
        case ch.ExportRunning(workspace_id=ws, export_id=export_id, now=now):
            return {
                "ConditionCheck": {
                    "Key": keys.as_key(keys.export(ws, export_id)),
                    "ConditionExpression": "#status = :running AND #ttl > :now",
                    "ExpressionAttributeNames": _NAMES,
                    "ExpressionAttributeValues": {":running": "running", ":now": now},
                }
            }
        case ch.FinishExport(workspace_id=ws, export_id=export_id, status=status):
            return {
                "Update": {
                    "Key": keys.as_key(keys.export(ws, export_id)),
                    "UpdateExpression": "SET #status = :status",
                    "ConditionExpression": "#status = :running",
                    "ExpressionAttributeNames": {"#status": "status"},
                    "ExpressionAttributeValues": {":status": status, ":running": "running"},
                }
            }
        case ch.DownloadExport(workspace_id=ws, export_id=export_id, by=by, at=at, now=now):
            return {
                "Update": {
                    "Key": keys.as_key(keys.export(ws, export_id)),
                    "UpdateExpression": "SET #status = :downloaded, downloadedAt = :at",
                    "ConditionExpression": "#status = :ready AND requestedBy = :by AND #ttl > :now",
                    "ExpressionAttributeNames": _NAMES,
                    "ExpressionAttributeValues": {
                        ":downloaded": "downloaded",
                        ":at": at,
                        ":ready": "ready",
                        ":by": by,
                        ":now": now,
                    },
                }
            }
    found = import_to_dynamo(change)
    if found is not None:
        return found
    raise TypeError(f"no DynamoDB form for {type(change).__name__}")
