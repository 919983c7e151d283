"""Exports judged on the in-memory table (no sockets): who may export what, what each scope's archive holds
(never another member's private data), the manifest's counts and digests, one download, the archive limit,
expiry, and a file written twice (a retried step) leaving the same manifest."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from unittest import mock

import pytest

from tests.unit.turns.test_services import EDITOR, OWNER, VIEWER, World
from workspace_memory.entries.model import Draft, EntryText
from workspace_memory.entries.service import EntryService
from workspace_memory.kernel.errors import (
    ExportDownloaded,
    ExportNotFound,
    ExportNotReady,
    ExportNotRunning,
    ExportTooLarge,
    Forbidden,
    InvalidExportId,
    Unavailable,
    WorkspaceNotFound,
)
from workspace_memory.kernel.terms import EntryScope, EntryType, ExportFile, ExportScope
from workspace_memory.store import keys
from workspace_memory.workspaces.export_contract import EXPORT_TTL_SECONDS, FILES, ExportInput
from workspace_memory.workspaces.exports import Archive, ExportService, RunProgress

pytestmark = pytest.mark.unit

OWNER_SECRET = "owner-private-marker-7f3a"
EDITOR_SECRET = "editor-private-marker-91bc"


@dataclass
class FakeRunner:
    started: list[ExportInput] = field(default_factory=list)

    def start(self, export: ExportInput) -> None:
        self.started.append(export)

    def progress(self, export_id: str) -> RunProgress | None:
        return None


def setup() -> tuple[World, str, ExportService, FakeRunner]:
    w = World()
    ws = w.workspace()
    entries = EntryService(w.table, w.cipher, w.clock)
    entries.create(OWNER, ws, Draft(EntryType.FACT, EntryText("Shared", "shared fact", "a shared body")))
    entries.create(OWNER, ws, Draft(EntryType.FACT, EntryText("Mine", OWNER_SECRET, OWNER_SECRET), EntryScope.MEMBER))
    entries.create(
        EDITOR, ws, Draft(EntryType.FACT, EntryText("Mine", EDITOR_SECRET, EDITOR_SECRET), EntryScope.MEMBER)
    )
    w.document.save(EDITOR, ws, "# Memory\n- the editor wrote this\n", 1)
    runner = FakeRunner()
    return w, ws, ExportService(w.table, w.cipher, w.clock, runner), runner


def run(service: ExportService, export: ExportInput) -> None:
    """The workflow's steps, in order (a file alone past the limit ends the files)."""
    too_large = False
    for file in FILES[export.scope]:
        too_large = service.write_file(export.workspace_id, export.export_id, file).too_large
        if too_large:
            break
    service.finish(export.workspace_id, export.export_id, too_large=too_large)


def export_of(service: ExportService, runner: FakeRunner, user: str, ws: str, scope: ExportScope) -> str:
    progress = service.request(user, ws, scope)
    run(service, runner.started[-1])
    return progress.export_id


def check_manifest(archive: Archive) -> None:
    listed = archive.manifest["files"]
    assert isinstance(listed, dict)
    assert set(listed) == set(archive.files)
    for name, text in archive.files.items():
        assert listed[name]["sha256"] == hashlib.sha256(text.encode()).hexdigest()
        assert listed[name]["bytes"] == len(text.encode())


def test_a_member_exports_only_their_own_data() -> None:
    _, ws, service, runner = setup()
    export_id = export_of(service, runner, EDITOR, ws, ExportScope.ME)
    archive = service.download(EDITOR, ws, export_id)
    check_manifest(archive)
    assert set(archive.files) == {file.value for file in FILES[ExportScope.ME]}
    whole = json.dumps(archive.files)
    assert EDITOR_SECRET in whole
    assert OWNER_SECRET not in whole
    assert "a shared body" not in whole
    versions = json.loads(archive.files[ExportFile.DOCUMENTS.value])
    assert [(v["version"], v["author"]) for v in versions] == [(2, EDITOR)]
    listed = archive.manifest["files"]
    assert isinstance(listed, dict)
    assert listed[ExportFile.ENTRIES.value]["count"] == 1


def test_the_owner_exports_the_workspace_without_others_private_entries() -> None:
    _, ws, service, runner = setup()
    export_id = export_of(service, runner, OWNER, ws, ExportScope.WORKSPACE)
    archive = service.download(OWNER, ws, export_id)
    check_manifest(archive)
    whole = json.dumps(archive.files)
    assert OWNER_SECRET in whole
    assert "a shared body" in whole
    assert EDITOR_SECRET not in whole
    assert archive.files[ExportFile.DOCUMENT_MD.value] == "# Memory\n- the editor wrote this\n"
    members = json.loads(archive.files[ExportFile.MEMBERS.value])
    assert {(m["userId"], m["role"]) for m in members} == {(OWNER, "owner"), (EDITOR, "editor"), (VIEWER, "viewer")}
    listed = archive.manifest["files"]
    assert isinstance(listed, dict)
    assert (listed[ExportFile.DOCUMENTS.value]["count"], listed[ExportFile.ENTRIES.value]["count"]) == (2, 2)


def test_only_the_owner_exports_the_workspace_and_nothing_is_stored_otherwise() -> None:
    w, ws, service, runner = setup()
    before = w.snapshot()
    with pytest.raises(Forbidden):
        service.request(EDITOR, ws, ExportScope.WORKSPACE)
    with pytest.raises(WorkspaceNotFound):
        service.request("stranger", ws, ExportScope.ME)
    assert w.snapshot() == before
    assert runner.started == []


def test_an_archive_is_downloaded_once_and_its_files_go_with_it() -> None:
    w, ws, service, runner = setup()
    export_id = export_of(service, runner, EDITOR, ws, ExportScope.ME)
    with pytest.raises(ExportNotFound):
        service.download(OWNER, ws, export_id)  # another person's export: not found
    service.download(EDITOR, ws, export_id)
    assert not [key for key in w.table.items if key[1].startswith(keys.export_parts_prefix(export_id))]
    with pytest.raises(ExportDownloaded):
        service.download(EDITOR, ws, export_id)
    assert service.progress(EDITOR, ws, export_id).status == "downloaded"


def test_a_running_export_is_not_ready_and_bad_ids_are_refused() -> None:
    _, ws, service, _ = setup()
    progress = service.request(EDITOR, ws, ExportScope.ME)
    with pytest.raises(ExportNotReady):
        service.download(EDITOR, ws, progress.export_id)
    for bad in ("ex_1", "EXPORT#x", "ex_" + "g" * 24):
        with pytest.raises(InvalidExportId):
            service.progress(EDITOR, ws, bad)


def test_a_file_written_twice_leaves_the_same_manifest() -> None:
    _, ws, service, runner = setup()
    first = service.request(EDITOR, ws, ExportScope.ME)
    export = runner.started[-1]
    for file in FILES[export.scope]:
        service.write_file(ws, export.export_id, file)
        service.write_file(ws, export.export_id, file)  # a retried step
    service.finish(ws, export.export_id, too_large=False)
    service.finish(ws, export.export_id, too_large=False)  # a retried last step: the same answer
    again = export_of(service, runner, EDITOR, ws, ExportScope.ME)
    one, two = service.download(EDITOR, ws, first.export_id), service.download(EDITOR, ws, again)
    assert one.files == two.files
    assert one.manifest["files"] == two.manifest["files"]


def test_an_archive_past_the_limit_keeps_nothing() -> None:
    w, ws, service, runner = setup()
    with mock.patch("workspace_memory.workspaces.exports.MAX_ARCHIVE_BYTES", 400):
        export_id = export_of(service, runner, OWNER, ws, ExportScope.WORKSPACE)
    assert service.progress(OWNER, ws, export_id).status == "too_large"
    assert not [key for key in w.table.items if key[1].startswith(keys.export_parts_prefix(export_id))]
    with pytest.raises(ExportTooLarge):
        service.download(OWNER, ws, export_id)


def test_files_together_past_the_limit_keep_nothing() -> None:
    w, ws, service, runner = setup()
    with mock.patch("workspace_memory.workspaces.exports.MAX_ARCHIVE_BYTES", 1200):
        progress = service.request(OWNER, ws, ExportScope.WORKSPACE)
        export = runner.started[-1]
        written = [service.write_file(ws, export.export_id, file) for file in FILES[export.scope]]
        assert not any(file.too_large for file in written)  # each alone fits
        assert service.finish(ws, export.export_id, too_large=False).status == "too_large"
    assert not [key for key in w.table.items if key[1].startswith(keys.export_parts_prefix(progress.export_id))]


def test_an_archive_expires_a_day_after_the_request() -> None:
    w, ws, service, runner = setup()
    export_id = export_of(service, runner, EDITOR, ws, ExportScope.ME)
    w.clock.advance(EXPORT_TTL_SECONDS)
    with pytest.raises(ExportNotFound):
        service.download(EDITOR, ws, export_id)
    with pytest.raises(ExportNotFound):
        service.progress(EDITOR, ws, export_id)


def test_an_export_of_a_deleted_workspace_writes_nothing_more() -> None:
    w, ws, service, runner = setup()
    service.request(EDITOR, ws, ExportScope.ME)
    export = runner.started[-1]
    service.write_file(ws, export.export_id, FILES[export.scope][0])
    w.table.items[keys.meta(ws)]["deletedAt"] = "2026-01-01T00:00:00Z"  # the owner's tombstone
    before = w.snapshot()
    with pytest.raises(ExportNotRunning):
        service.write_file(ws, export.export_id, FILES[export.scope][1])
    with pytest.raises(ExportNotRunning):
        service.finish(ws, export.export_id, too_large=False)
    assert w.snapshot() == before


class DownRunner(FakeRunner):
    """Temporal unreachable: every start fails as the client reports it."""

    def start(self, export: ExportInput) -> None:
        raise Unavailable("workflow service unavailable (RPCError)", transient=True)


def test_an_export_whose_workflow_cannot_start_leaves_no_record_behind() -> None:
    w, ws, _, _ = setup()
    exports = ExportService(w.table, w.cipher, w.clock, DownRunner())
    before = w.snapshot()
    with pytest.raises(Unavailable):
        exports.request(EDITOR, ws, ExportScope.ME)
    assert w.snapshot() == before  # no export running for a day that nobody can follow
