"""Importing an archive on the real stack (decisions/0069): the owner's whole-workspace archive imported into a
new workspace by the import workflow, then exported again, gives the same files and digests; the import's
request, batches and completion are audit events by the owner; a changed archive is refused and stores
nothing."""

from __future__ import annotations

import json

import pytest

from tests.integration.export.export_support import Scene, body, exported, populate, wait_for_import
from tests.support import Api
from workspace_memory.bootstrap import Services
from workspace_memory.kernel.settings import Settings
from workspace_memory.kernel.terms import ExportFile
from workspace_memory.store import keys
from workspace_memory.workspaces.export_archive import digest_of
from workspace_memory.workspaces.export_files import canonical
from workspace_memory.workspaces.import_archive import import_id_of


@pytest.fixture(scope="module")
def scene(api: Api) -> Scene:
    return populate(api)


def test_an_archive_imported_and_exported_again_gives_the_same_files(
    api: Api, svc: Services, settings: Settings, scene: Scene, worker: Settings
) -> None:
    first = exported(api, svc, settings, scene.owner, scene.ws)
    target = api.workspace(scene.owner)
    started = api.call("POST", f"/v1/workspaces/{target}/imports", user=scene.owner, json=first)
    assert started.status_code == 202, started.text
    import_id = body(started)["importId"]
    result = wait_for_import(settings, svc, import_id)
    assert result.status == "completed"
    assert result.counts == {"versions": 2, "chains": 2, "revisions": 2, "members": 2}
    progress = api.call("GET", f"/v1/workspaces/{target}/imports/{import_id}", user=scene.owner)
    assert body(progress)["status"] == "completed"

    second = exported(api, svc, settings, scene.owner, target)
    assert second["files"] == first["files"]
    assert second["manifest"]["files"] == first["manifest"]["files"]
    assert second["manifest"]["workspaceId"] == target != first["manifest"]["workspaceId"]
    read = api.call("GET", f"/v1/workspaces/{target}/memory", user=scene.editor)
    assert read.status_code == 200, read.text
    # The request, every batch and the end are the owner's actions; no text is in the trail.
    audit = api.call("GET", f"/v1/workspaces/{target}/audit?limit=100&kind=import", user=scene.owner)
    assert audit.status_code == 200, audit.text
    told = [(e["op"], e["actor"]) for e in reversed(body(audit)["events"])]
    assert told[0] == ("requested", scene.owner)
    assert told[-1] == ("completed", scene.owner)
    assert ("applied", scene.owner) in told
    assert scene.owner_marker not in audit.text
    assert scene.shared_marker not in audit.text


def test_a_changed_archive_is_refused_and_the_target_stays_open_and_empty(
    api: Api, svc: Services, settings: Settings, scene: Scene, worker: Settings
) -> None:
    first = exported(api, svc, settings, scene.owner, scene.ws)
    members = json.loads(first["files"]["members.json"])
    members.append({"role": "editor", "userId": "someone-else"})
    forged = {**first, "files": {**first["files"], "members.json": json.dumps(members)}}
    target = api.workspace(scene.owner)
    refused = api.call("POST", f"/v1/workspaces/{target}/imports", user=scene.owner, json=forged)
    assert refused.status_code == 400, refused.text
    assert body(refused)["error"]["code"] == "INVALID_ARCHIVE"
    assert "someone-else" not in refused.text
    read = api.call("GET", f"/v1/workspaces/{target}/memory", user=scene.owner)
    assert read.status_code == 200, read.text
    assert body(read)["version"] == 0


def test_an_archive_edited_with_its_digests_recomputed_is_refused_by_its_signature(
    api: Api, svc: Services, settings: Settings, scene: Scene, worker: Settings
) -> None:
    """What the digests cannot prove: an owner who edits an archive and recomputes every digest (here to make
    someone a member who never was) still holds the signature of the manifest as the service wrote it."""
    first = exported(api, svc, settings, scene.owner, scene.ws)
    assert len(first["manifest"]["signature"]) > 100
    members = json.loads(first["files"]["members.json"])
    members.append({"role": "editor", "userId": "someone-else"})
    files = {**first["files"], "members.json": canonical(members)}
    digests = {name: digest_of(ExportFile(name), text) for name, text in sorted(files.items())}
    forged = {"manifest": {**first["manifest"], "files": digests}, "files": files}
    target = api.workspace(scene.owner)
    refused = api.call("POST", f"/v1/workspaces/{target}/imports", user=scene.owner, json=forged)
    assert (refused.status_code, body(refused)["error"]["code"]) == (400, "INVALID_ARCHIVE"), refused.text
    assert "someone-else" not in refused.text
    assert svc.table.get(*keys.member(target, "someone-else")) is None
    assert svc.table.get(*keys.import_(target, import_id_of(target, first["manifest"]["exportId"]))) is None
    # The same archive as exported still imports: the refusal was the edit's, not the signature's format.
    taken = api.call("POST", f"/v1/workspaces/{target}/imports", user=scene.owner, json=first)
    assert taken.status_code == 202, taken.text
    assert wait_for_import(settings, svc, body(taken)["importId"]).status == "completed"
