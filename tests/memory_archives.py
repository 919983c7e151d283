"""The archive's changes (an export's, an import's) judged and applied in plain Python, for `memory_table`."""

from __future__ import annotations

from workspace_memory.store import changes as ch
from workspace_memory.store import keys
from workspace_memory.store.ports import Item

Items = dict[keys.Key, Item]


def _live(items: Items, workspace_id: str) -> Item | None:
    meta = items.get(keys.meta(workspace_id))
    return None if meta is None or "deletedAt" in meta else meta


def archive_holds(change: ch.Change, items: Items) -> bool | None:
    """Whether the change's condition holds; None for a change of neither kind."""
    match change:
        case ch.ExportRunning(workspace_id=ws, export_id=export_id, now=now):
            found = items.get(keys.export(ws, export_id)) or {}
            return found.get("status") == "running" and int(found.get("ttl", 0)) > now
        case ch.FinishExport(workspace_id=ws, export_id=export_id):
            return (items.get(keys.export(ws, export_id)) or {}).get("status") == "running"
        case ch.DownloadExport(workspace_id=ws, export_id=export_id, by=by, now=now):
            found = items.get(keys.export(ws, export_id)) or {}
            ready = found.get("status") == "ready" and found.get("requestedBy") == by
            return ready and int(found.get("ttl", 0)) > now
        case ch.Absent(key=key):
            return key not in items
        case ch.BeginImport(workspace_id=ws):
            meta = _live(items, ws)
            return meta is not None and "importingId" not in meta
        case ch.ImportHolds(workspace_id=ws, import_id=import_id) | ch.EndImport(workspace_id=ws, import_id=import_id):
            return (_live(items, ws) or {}).get("importingId") == import_id
        case ch.ApplyImport(workspace_id=ws, import_id=import_id, step=step):
            found = items.get(keys.import_(ws, import_id)) or {}
            return found.get("status") == "running" and step not in found.get("applied", set())
        case ch.CompleteImport(workspace_id=ws, import_id=import_id):
            return (items.get(keys.import_(ws, import_id)) or {}).get("status") == "running"
    return None


def archive_apply(change: ch.Change, items: Items) -> bool:
    """Applies the change if it is one of the archive's; False for any other."""
    match change:
        case ch.FinishExport(workspace_id=ws, export_id=export_id, status=status):
            items[keys.export(ws, export_id)]["status"] = status
        case ch.DownloadExport(workspace_id=ws, export_id=export_id, at=at):
            items[keys.export(ws, export_id)].update(status="downloaded", downloadedAt=at)
        case ch.BeginImport(workspace_id=ws, import_id=import_id, history_days=days, agent_days=agent_days):
            items[keys.meta(ws)].update(importingId=import_id, historyDays=days, agentDays=agent_days)
        case ch.ApplyImport(workspace_id=ws, import_id=import_id, step=step, counts=counts):
            record = items[keys.import_(ws, import_id)]
            record["applied"] = {*record.get("applied", set()), step}
            for name, value in counts.items():
                record[name] = int(record.get(name, 0)) + value
        case ch.CompleteImport(workspace_id=ws, import_id=import_id, at=at):
            items[keys.import_(ws, import_id)].update(status="completed", completedAt=at)
        case ch.EndImport(workspace_id=ws):
            items[keys.meta(ws)].pop("importingId", None)
        case ch.ExportRunning() | ch.Absent() | ch.ImportHolds():
            pass
        case _:
            return False
    return True
