"""Exports on the real stack (decisions/0068): the functions from the built artifact, the export workflow on the
real Temporal dev server, the worker calling the automation routes. A member's archive holds none of another
member's private text (its stored files decrypted here and scanned, then the download); the owner's archive
has the counts and digests its manifest says; refusals store nothing; an archive is served once, then its
files are gone; and nothing of the text is in clear anywhere: items, logs, the workflow's history."""

from __future__ import annotations

import hashlib
import json
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from scripts.localstack.resources import LocalResources
from tests.integration.export.export_support import (
    Scene,
    archive,
    body,
    history_text,
    populate,
    request,
    stored_files,
    wait_for_export,
)
from tests.support import Api, FunctionLogs, item_bytes, new_user, scan_all
from workspace_memory.bootstrap import Services
from workspace_memory.kernel.settings import Settings
from workspace_memory.store import keys

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def scene(api: Api) -> Scene:
    return populate(api)


def parts(resources: LocalResources, export_id: str) -> list[str]:
    prefix = keys.export_parts_prefix(export_id)
    return [item["sk"]["S"] for item in scan_all(resources) if item["sk"]["S"].startswith(prefix)]


def check_digests(answer: dict[str, object]) -> dict[str, dict[str, object]]:
    """Every file's SHA-256 and size recomputed here equal what the manifest says; the manifest's files."""
    manifest, files = answer["manifest"], answer["files"]
    assert isinstance(manifest, dict)
    assert isinstance(files, dict)
    listed: dict[str, dict[str, object]] = manifest["files"]
    assert set(listed) == set(files)
    for name, text in files.items():
        assert listed[name]["sha256"] == hashlib.sha256(text.encode()).hexdigest(), name
        assert listed[name]["bytes"] == len(text.encode()), name
    return listed


def test_a_member_export_holds_none_of_another_members_private_data(
    api: Api,
    svc: Services,
    settings: Settings,
    resources: LocalResources,
    scene: Scene,
    worker: Settings,
    function_logs: FunctionLogs,
) -> None:
    with function_logs.captured() as logs:
        started = request(api, scene.editor, scene.ws, "me")
        assert started.status_code == 202, started.text
        export_id = body(started)["exportId"]
        assert (body(started)["scope"], body(started)["filesTotal"]) == ("me", 5)
        assert wait_for_export(settings, svc, export_id).status == "ready"

        stored = stored_files(svc, scene.ws, export_id)  # decrypted here, before the download
        plain = json.dumps(stored)
        assert scene.editor_marker in plain
        assert scene.owner_marker not in plain
        receipts = json.loads(stored["receipts.json"])
        assert [r["conversationId"] for r in receipts] == [scene.conversation]  # the editor's conversation only
        sessions = json.loads(stored["key-sessions.json"])
        assert len(sessions) == 1
        assert all("secret" not in json.dumps(s).lower() for s in sessions)
        versions = json.loads(stored["documents.json"])
        assert [(v["version"], v["author"]) for v in versions] == [(2, scene.editor)]

        progress = api.call("GET", f"/v1/workspaces/{scene.ws}/exports/{export_id}", user=scene.editor)
        assert (progress.status_code, body(progress)["status"]) == (200, "ready")
        stranger = api.call("GET", f"/v1/workspaces/{scene.ws}/exports/{export_id}", user=scene.owner)
        assert (stranger.status_code, body(stranger)["error"]["code"]) == (404, "EXPORT_NOT_FOUND")
        assert archive(api, scene.owner, scene.ws, export_id).status_code == 404  # not the owner's either

        downloaded = archive(api, scene.editor, scene.ws, export_id)
        assert downloaded.status_code == 200, downloaded.text
        listed = check_digests(body(downloaded))
        assert body(downloaded)["files"] == {name: text for name, text in stored.items() if name != "manifest.json"}
        assert listed["entries.json"]["count"] == 1
        assert scene.owner_marker not in downloaded.text
        assert parts(resources, export_id) == []  # the download took the files with it

        again = archive(api, scene.editor, scene.ws, export_id)
        assert (again.status_code, body(again)["error"]["code"]) == (410, "EXPORT_ALREADY_DOWNLOADED")
        for marker in (scene.editor_marker, scene.owner_marker, scene.shared_marker):
            assert marker not in logs.getvalue()
    history = history_text(settings, svc, export_id)
    for marker in (scene.editor_marker, scene.owner_marker, scene.shared_marker):
        assert marker not in history
        assert not [item["sk"]["S"] for item in scan_all(resources) if marker.encode() in item_bytes(item)]


def test_the_owner_exports_the_workspace_with_the_counts_and_digests_it_holds(
    api: Api, svc: Services, settings: Settings, scene: Scene, worker: Settings
) -> None:
    started = request(api, scene.owner, scene.ws, "workspace")
    assert started.status_code == 202, started.text
    export_id = body(started)["exportId"]
    assert wait_for_export(settings, svc, export_id).status == "ready"
    downloaded = archive(api, scene.owner, scene.ws, export_id)
    assert downloaded.status_code == 200, downloaded.text
    listed = check_digests(body(downloaded))
    files = body(downloaded)["files"]
    assert set(files) == {
        "documents.json",
        "document.md",
        "entries.json",
        "policy.json",
        "members.json",
        "retention.json",
    }
    counts = {name: listed[name]["count"] for name in files}
    assert counts == {
        "documents.json": 2,
        "document.md": 1,
        "entries.json": 2,  # the shared entry and the owner's own private one, never the editor's
        "policy.json": 1,
        "members.json": 2,
        "retention.json": 1,
    }
    assert scene.owner_marker in files["entries.json"]
    assert scene.editor_marker not in downloaded.text
    assert files["document.md"] == f"# Team\n- {scene.shared_marker}\n- the editor's line\n"
    members = json.loads(files["members.json"])
    assert sorted((m["userId"], m["role"]) for m in members) == sorted(
        [(scene.owner, "owner"), (scene.editor, "editor")]
    )
    assert json.loads(files["retention.json"]) == {"historyDays": 90, "agentDays": 90}
    # The request and the download are in the audit trail, by the owner; the files and the end are not.
    audit = api.call("GET", f"/v1/workspaces/{scene.ws}/audit?limit=100&kind=export", user=scene.owner)
    assert audit.status_code == 200, audit.text
    told = [(e["op"], e["actor"], [t["id"] for t in e["targets"]]) for e in reversed(body(audit)["events"])]
    assert ("requested", scene.owner, [export_id]) in told
    assert ("downloaded", scene.owner, [export_id]) in told
    assert scene.owner_marker not in audit.text


def test_a_non_owner_workspace_export_is_forbidden_and_stores_nothing(
    api: Api, resources: LocalResources, scene: Scene
) -> None:
    before = scan_all(resources)
    refused = request(api, scene.editor, scene.ws, "workspace")
    assert (refused.status_code, body(refused)["error"]["code"]) == (403, "FORBIDDEN")
    outsider = request(api, new_user("outsider"), scene.ws, "me")
    assert (outsider.status_code, body(outsider)["error"]["code"]) == (404, "WORKSPACE_NOT_FOUND")
    assert scan_all(resources) == before


@pytest.mark.parametrize(
    ("method", "path", "payload", "code"),
    [
        ("POST", "", {"scope": "everything"}, "INVALID_EXPORT_SCOPE"),
        ("POST", "", {"scope": 3}, "INVALID_EXPORT_SCOPE"),
        ("POST", "", {}, "INVALID_REQUEST"),
        ("POST", "", {"scope": "me", "extra": 1}, "INVALID_REQUEST"),
        ("GET", "/not-an-id", None, "INVALID_EXPORT_ID"),
        ("GET", "/ex_" + "z" * 24 + "/archive", None, "INVALID_EXPORT_ID"),
    ],
)
def test_bad_input_is_refused_with_a_stable_code_and_changes_nothing(
    api: Api, resources: LocalResources, scene: Scene, method: str, path: str, payload: object, code: str
) -> None:
    before = scan_all(resources)
    answer = api.call(method, f"/v1/workspaces/{scene.ws}/exports{path}", user=scene.editor, json=payload)
    assert (answer.status_code, body(answer)["error"]["code"]) == (400, code)
    assert scan_all(resources) == before


def test_an_unknown_export_is_not_found(api: Api, scene: Scene) -> None:
    for path in ("", "/archive"):
        answer = api.call("GET", f"/v1/workspaces/{scene.ws}/exports/ex_{'0' * 24}{path}", user=scene.editor)
        assert (answer.status_code, body(answer)["error"]["code"]) == (404, "EXPORT_NOT_FOUND")


def test_two_downloads_at_once_serve_the_archive_once(
    api: Api, svc: Services, settings: Settings, scene: Scene, worker: Settings
) -> None:
    started = request(api, scene.owner, scene.ws, "me")
    assert started.status_code == 202, started.text
    export_id = body(started)["exportId"]
    assert wait_for_export(settings, svc, export_id).status == "ready"
    barrier = threading.Barrier(2)

    def download(_: int) -> int:
        barrier.wait(timeout=30)
        return archive(api, scene.owner, scene.ws, export_id).status_code

    with ThreadPoolExecutor(max_workers=2) as pool:
        statuses = sorted(pool.map(download, range(2)))
    assert statuses == [200, 410]
