"""A workspace with every kind of data an export reads, written over HTTP by an owner and an editor, each with
private text marked so a scan can tell whose it is; and the export's steps as a person takes them."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any, TypeVar

import requests

from tests.integration.turn_support import codec_client, run
from tests.support import Api, admission_headers, new_user
from workspace_memory.bootstrap import Services
from workspace_memory.kernel.settings import Settings
from workspace_memory.kernel.terms import ExportFile
from workspace_memory.store import export_queries
from workspace_memory.workspaces.export_archive import assembled, export_context
from workspace_memory.workspaces.export_contract import ExportResult, export_workflow_id
from workspace_memory.workspaces.import_contract import ImportResult, import_workflow_id

R = TypeVar("R")


@dataclass(frozen=True)
class Scene:
    ws: str
    owner: str
    editor: str
    owner_marker: str
    editor_marker: str
    shared_marker: str
    conversation: str


def entry(api: Api, user: str, ws: str, scope: str, text: str) -> None:
    body = {"scope": scope, "type": "fact", "title": "Note", "summary": text, "body": f"{text} in the body"}
    response = api.call("POST", f"/v1/workspaces/{ws}/entries", user=user, json=body)
    assert response.status_code == 201, response.text


def populate(api: Api) -> Scene:
    owner, editor = new_user("owner"), new_user("editor")
    run_id = uuid.uuid4().hex[:10]
    scene = Scene(
        ws=api.workspace(owner),
        owner=owner,
        editor=editor,
        owner_marker=f"OWNER-PRIVATE-{run_id}",
        editor_marker=f"EDITOR-PRIVATE-{run_id}",
        shared_marker=f"SHARED-{run_id}",
        conversation=f"conv-export-{run_id}",
    )
    ws = scene.ws
    api.add_member(owner, ws, editor, "editor")
    assert api.call("PUT", f"/v1/workspaces/{ws}/ai", user=owner, json={"enabled": True}).status_code == 200
    assert api.save(owner, ws, f"# Team\n- {scene.shared_marker}\n", 0).status_code == 200
    assert api.save(editor, ws, f"# Team\n- {scene.shared_marker}\n- the editor's line\n", 1).status_code == 200
    entry(api, owner, ws, "workspace", scene.shared_marker)
    entry(api, owner, ws, "member", scene.owner_marker)
    entry(api, editor, ws, "member", scene.editor_marker)
    for user in (owner, editor):  # each has a key session and a conversation with one recall receipt
        key_session = api.key_session(user, ws)
        conversation = scene.conversation if user == editor else f"{scene.conversation}-owner"
        admitted = api.admit(conversation, ws, user, key_session, sessionId="s-1")
        assert admitted.status_code == 201, admitted.text
        recall = api.call(
            "GET",
            f"/v1/automation/workspaces/{ws}/memory?purpose=recall",
            automation="runtime",
            headers=admission_headers(admitted.json()),
        )
        assert recall.status_code == 200, recall.text
    return scene


def request(api: Api, user: str, ws: str, scope: str) -> requests.Response:
    return api.call("POST", f"/v1/workspaces/{ws}/exports", user=user, json={"scope": scope})


def archive(api: Api, user: str, ws: str, export_id: str) -> requests.Response:
    return api.call("GET", f"/v1/workspaces/{ws}/exports/{export_id}/archive", user=user)


def workflow_result(settings: Settings, svc: Services, workflow_id: str, result_type: type[R]) -> R:
    """A workflow's result (a Temporal long poll, not a sleep)."""

    async def wait() -> R:
        client = await codec_client(settings, svc.cipher)
        result: R = await client.get_workflow_handle(workflow_id, result_type=result_type).result()
        return result

    return run(wait())


def wait_for_export(settings: Settings, svc: Services, export_id: str) -> ExportResult:
    return workflow_result(settings, svc, export_workflow_id(export_id), ExportResult)


def exported(api: Api, svc: Services, settings: Settings, user: str, ws: str) -> dict[str, Any]:
    """The owner's whole-workspace archive, exported and downloaded."""
    started = request(api, user, ws, "workspace")
    assert started.status_code == 202, started.text
    export_id = body(started)["exportId"]
    assert wait_for_export(settings, svc, export_id).status == "ready"
    downloaded = archive(api, user, ws, export_id)
    assert downloaded.status_code == 200, downloaded.text
    return body(downloaded)


def wait_for_import(settings: Settings, svc: Services, import_id: str) -> ImportResult:
    return workflow_result(settings, svc, import_workflow_id(import_id), ImportResult)


def history_text(settings: Settings, svc: Services, export_id: str) -> str:
    """The export workflow's whole history, its payloads decoded: what an operator with the codec would see."""

    async def fetch() -> str:
        client = await codec_client(settings, svc.cipher)
        history = await client.get_workflow_handle(export_workflow_id(export_id)).fetch_history()
        return str(history.to_json())

    return run(fetch())


def stored_files(svc: Services, ws: str, export_id: str) -> dict[str, str]:
    """The export's files as stored, decrypted here under their own contexts (what the download will serve)."""
    found = assembled(export_queries.chunks(svc.table, ws, export_id))
    return {
        file.value: svc.cipher.decrypt(ciphertext, export_context(ws, export_id, ExportFile(file))).decode()
        for file, ciphertext in found.items()
    }


def body(response: requests.Response) -> dict[str, Any]:
    data: dict[str, Any] = response.json()
    return data
