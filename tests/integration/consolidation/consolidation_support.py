"""A consolidation test's scene: a workspace seeded with planted duplicates, a contradiction, unrelated entries and a
member's private entry close to a workspace one; and a run started on the real Temporal dev server, awaited by a
long poll (no sleeps)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tests.integration.export.export_support import workflow_result
from tests.integration.turn_support import codec_client, run
from tests.support import Api, new_user
from workspace_memory.bootstrap import Services
from workspace_memory.consolidation.contract import (
    WORKFLOW_NAME,
    ConsolidationInput,
    ConsolidationResult,
    RunTrigger,
    consolidation_workflow_id,
)
from workspace_memory.kernel.ids import new_id
from workspace_memory.kernel.settings import Settings
from workspace_memory.store import keys
from workspace_memory.store.paging import query_all

PLANTED = {
    "dup_old": ("Deploy window", "Deploys happen on Tuesday", "We ship every Tuesday afternoon."),
    "dup_new": ("Deployment window", "Deploys happen on Tuesdays", "We ship every Tuesday afternoon."),
    "claim_old": ("Database", "We use Postgres 15 for the main database", ""),
    "claim_new": ("Database", "The main database is MySQL 8", ""),
    "party": ("Office party", "The office party is on December 18", ""),
    "coffee": ("Coffee machine", "The coffee machine is on floor 3", ""),
    "standup": ("Standup time", "Standup is at 10:00", ""),
}
PRIVATE = {"my_standup": ("Standup time", "Standup is at 9:30", "")}
"""The editor's own: the same subject as `standup`, another claim, never paired with a workspace entry."""


@dataclass(frozen=True)
class Scene:
    ws: str
    owner: str
    editor: str
    ids: dict[str, str]


def entry(api: Api, user: str, ws: str, text: tuple[str, str, str], scope: str = "workspace") -> str:
    title, summary, body = text
    payload = {"type": "fact", "scope": scope, "title": title, "summary": summary, "body": body}
    made = api.call("POST", f"/v1/workspaces/{ws}/entries", user=user, json=payload)
    assert made.status_code == 201, made.text
    entry_id: str = made.json()["entryId"]
    return entry_id


def seeded(api: Api) -> Scene:
    """In this order, so each `_new` is the fresher of its pair."""
    owner, editor = new_user("owner"), new_user("editor")
    ws = api.workspace(owner)
    api.add_member(owner, ws, editor, "editor")
    ids = {name: entry(api, owner, ws, text) for name, text in PLANTED.items()}
    ids |= {name: entry(api, editor, ws, text, "member") for name, text in PRIVATE.items()}
    return Scene(ws, owner, editor, ids)


def start(settings: Settings, svc: Services, ws: str, queue: str | None = None) -> str:
    """An owner's run of `ws` on `queue` (the settings' own unless given): its run id."""
    run_id = new_id("cr")

    async def started() -> None:
        client = await codec_client(settings, svc.cipher)
        await client.start_workflow(
            WORKFLOW_NAME,
            ConsolidationInput(workspace_id=ws, run_id=run_id, trigger=RunTrigger.OWNER),
            id=consolidation_workflow_id(ws, run_id),
            task_queue=queue or settings.temporal_task_queue,
        )

    run(started())
    return run_id


def result(settings: Settings, svc: Services, ws: str, run_id: str) -> ConsolidationResult:
    return workflow_result(settings, svc, consolidation_workflow_id(ws, run_id), ConsolidationResult)


def consolidated(settings: Settings, svc: Services, ws: str) -> ConsolidationResult:
    return result(settings, svc, ws, start(settings, svc, ws))


def partition(svc: Services, ws: str, prefix: str = "") -> list[dict[str, Any]]:
    """The workspace's stored items whose sort key starts with `prefix`, as the table holds them."""
    return list(query_all(svc.table, keys.ws(ws), prefix, page_size=500))


def memory(svc: Services, ws: str) -> list[dict[str, Any]]:
    """Every stored item of the workspace but the candidates, the run records, the audit trail and the search
    snapshot (a sealed cache): what a run must leave as it was."""
    skip = ("ENTRYCAND#", "CONSRUN#", "AUDIT#", "SEARCHSNAP")
    return [item for item in partition(svc, ws) if not str(item["sk"]).startswith(skip)]


def candidates(api: Api, user: str, ws: str) -> list[dict[str, Any]]:
    listed = api.call("GET", f"/v1/workspaces/{ws}/candidates", user=user)
    assert listed.status_code == 200, listed.text
    found: list[dict[str, Any]] = listed.json()["candidates"]
    return found
