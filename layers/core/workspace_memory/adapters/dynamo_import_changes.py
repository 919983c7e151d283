"""The import's changes (`store/changes/imports.py`) in DynamoDB's dialect: the workspace closed and opened by
`META.importingId`, the record's steps as a string set (a step is added once), its counts added with them."""

from __future__ import annotations

from typing import Any

from workspace_memory.store import changes as ch
from workspace_memory.store import keys

_LIVE = "attribute_exists(pk) AND attribute_not_exists(deletedAt)"


def import_to_dynamo(change: ch.Change) -> dict[str, Any] | None:
    match change:
        case ch.Absent(key=key):
            return {"ConditionCheck": {"Key": keys.as_key(key), "ConditionExpression": "attribute_not_exists(pk)"}}
        case ch.BeginImport(workspace_id=ws, import_id=import_id, history_days=days, agent_days=agent_days):
            return {
                "Update": {
                    "Key": keys.as_key(keys.meta(ws)),
                    "UpdateExpression": "SET importingId = :id, historyDays = :days, agentDays = :agent",
                    "ConditionExpression": f"{_LIVE} AND attribute_not_exists(importingId)",
                    "ExpressionAttributeValues": {":id": import_id, ":days": days, ":agent": agent_days},
                }
            }
        case ch.ImportHolds(workspace_id=ws, import_id=import_id):
            return {
                "ConditionCheck": {
                    "Key": keys.as_key(keys.meta(ws)),
                    "ConditionExpression": f"{_LIVE} AND importingId = :id",
                    "ExpressionAttributeValues": {":id": import_id},
                }
            }
        case ch.ApplyImport(workspace_id=ws, import_id=import_id, step=step, counts=counts):
            names = {f"#c{n}": name for n, name in enumerate(sorted(counts))}
            adds = ", ".join(f"#c{n} :c{n}" for n in range(len(names)))
            values: dict[str, Any] = {f":c{n}": counts[name] for n, name in enumerate(sorted(counts))}
            return {
                "Update": {
                    "Key": keys.as_key(keys.import_(ws, import_id)),
                    "UpdateExpression": "ADD applied :step" + (f", {adds}" if adds else ""),
                    "ConditionExpression": "#status = :running AND NOT contains(applied, :one)",
                    "ExpressionAttributeNames": {"#status": "status", **names},
                    "ExpressionAttributeValues": {":step": {step}, ":one": step, ":running": "running", **values},
                }
            }
        case ch.CompleteImport(workspace_id=ws, import_id=import_id, at=at):
            return {
                "Update": {
                    "Key": keys.as_key(keys.import_(ws, import_id)),
                    "UpdateExpression": "SET #status = :completed, completedAt = :at",
                    "ConditionExpression": "#status = :running",
                    "ExpressionAttributeNames": {"#status": "status"},
                    "ExpressionAttributeValues": {":completed": "completed", ":at": at, ":running": "running"},
                }
            }
        case ch.EndImport(workspace_id=ws, import_id=import_id):
            return {
                "Update": {
                    "Key": keys.as_key(keys.meta(ws)),
                    "UpdateExpression": "REMOVE importingId",
                    "ConditionExpression": "importingId = :id",
                    "ExpressionAttributeValues": {":id": import_id},
                }
            }
    return None
