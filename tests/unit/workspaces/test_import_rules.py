"""Imports judged on the in-memory table (no sockets): an owner's whole-workspace archive imported into a new,
empty workspace and exported again gives the same files; a changed file, a target that holds anything, or
another person's archive is refused with nothing stored; the workspace is closed while the import runs; and a
step retried after it landed writes nothing twice."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import pytest

from tests.unit.turns.test_services import EDITOR, OWNER, World
from tests.unit.workspaces.test_deletion_rules import deletion
from tests.unit.workspaces.test_export_rules import FakeRunner, export_of, setup
from workspace_memory.kernel.errors import Forbidden
from workspace_memory.kernel.terms import ExportFile, ExportScope, ShareType
from workspace_memory.workspaces.archive_signature import SIGNATURE_CONTEXT, check_signature, signed
from workspace_memory.workspaces.export_archive import digest_of
from workspace_memory.workspaces.export_files import canonical
from workspace_memory.workspaces.exports import Archive, ExportService
from workspace_memory.workspaces.import_contract import APPLIED_FILES, ImportInput
from workspace_memory.workspaces.import_errors import (
    ImportNotRunning,
    ImportTargetNotEmpty,
    InvalidArchive,
    WorkspaceImporting,
)
from workspace_memory.workspaces.imports import ImportService

pytestmark = pytest.mark.unit


@dataclass
class FakeImportRunner:
    """Records starts; `failing` holds the imports whose last run ended without completing (a start clears it,
    as a new run after a failed one does)."""

    started: list[ImportInput] = field(default_factory=list)
    failing: set[str] = field(default_factory=set)

    def start(self, data: ImportInput) -> None:
        self.started.append(data)
        self.failing.discard(data.import_id)

    def failed(self, import_id: str) -> bool:
        return import_id in self.failing


@dataclass
class Setup:
    world: World
    source: str
    archive: Archive
    target: str
    imports: ImportService
    runner: FakeImportRunner


def prepared() -> Setup:
    w, ws, exports, runner = setup()
    w.document.save(OWNER, ws, "# Memory\n- the owner revised this\n", 2)
    archive = exports.download(OWNER, ws, export_of(exports, runner, OWNER, ws, ExportScope.WORKSPACE))
    target = w.access.create_workspace(OWNER, "restored", ShareType.SHARED)
    imports_runner = FakeImportRunner()
    return Setup(w, ws, archive, target, ImportService(w.table, w.cipher, w.clock, imports_runner), imports_runner)


def run(imports: ImportService, data: ImportInput) -> None:
    for file in APPLIED_FILES:
        imports.apply_file(data.workspace_id, data.import_id, file)
    imports.finish(data.workspace_id, data.import_id)


def test_an_archive_imported_and_exported_again_gives_the_same_files() -> None:
    s = prepared()
    progress = s.imports.request(OWNER, s.target, s.archive.manifest, s.archive.files)
    assert progress.status == "running"
    run(s.imports, s.runner.started[-1])
    done = s.imports.progress(OWNER, s.target, progress.import_id)
    assert done.status == "completed"
    assert done.counts == {"versions": 3, "chains": 2, "revisions": 2, "members": 3}

    w = s.world
    again_runner = FakeRunner()
    exports = ExportService(w.table, w.cipher, w.clock, again_runner)
    again = exports.download(OWNER, s.target, export_of(exports, again_runner, OWNER, s.target, ExportScope.WORKSPACE))
    assert again.files == s.archive.files
    assert again.manifest["files"] == s.archive.manifest["files"]
    assert again.manifest["workspaceId"] == s.target != s.archive.manifest["workspaceId"]
    assert w.head(s.target) == w.head(s.source)


def test_a_changed_file_is_refused_and_nothing_is_stored() -> None:
    s = prepared()
    members = json.loads(s.archive.files[ExportFile.MEMBERS.value])
    members.append({"role": "editor", "userId": "someone-else"})
    files = {**s.archive.files, ExportFile.MEMBERS.value: json.dumps(members)}
    before = s.world.snapshot()
    with pytest.raises(InvalidArchive):
        s.imports.request(OWNER, s.target, s.archive.manifest, files)
    assert s.world.snapshot() == before
    assert s.runner.started == []


def forged(s: Setup, rows: str, signature: object) -> tuple[dict[str, object], dict[str, str]]:
    """The archive with members.json replaced and every digest of its manifest recomputed to match."""
    files = {**s.archive.files, ExportFile.MEMBERS.value: rows}
    digests = {name: digest_of(ExportFile(name), text) for name, text in sorted(files.items())}
    return {**s.archive.manifest, "files": digests, "signature": signature}, files


@pytest.mark.parametrize("signature", ["theirs", "", None, "!!not base64!!", "A" * 4_096, "kept"])
def test_a_manifest_changed_with_its_digests_recomputed_is_refused(signature: object) -> None:
    """The digests tie the files to the manifest; only the signature ties the manifest to this service."""
    s = prepared()
    members = json.loads(s.archive.files[ExportFile.MEMBERS.value])
    members.append({"role": "editor", "userId": "someone-else"})
    if signature == "theirs":  # another archive's genuine signature
        other = s.world.access.create_workspace(OWNER, "other", ShareType.SHARED)
        signature = signed(s.world.cipher, {**s.archive.manifest, "workspaceId": other})["signature"]
    elif signature == "kept":
        signature = s.archive.manifest["signature"]
    manifest, files = forged(s, canonical(members), signature)
    before = s.world.snapshot()
    with pytest.raises(InvalidArchive, match=r"signature|signed"):
        s.imports.request(OWNER, s.target, manifest, files)
    assert s.world.snapshot() == before
    assert s.runner.started == []


def test_an_archive_as_exported_carries_the_signature_that_opens_to_its_manifest() -> None:
    s = prepared()
    check_signature(s.world.cipher, s.archive.manifest)
    # Under the stack's key, no workspace's: the archive outlives the workspace it came from.
    assert [c for c in s.world.cipher.contexts if c["kind"] == "archive-signature"] == [SIGNATURE_CONTEXT]


def test_a_target_that_holds_anything_is_refused() -> None:
    s = prepared()
    with pytest.raises(ImportTargetNotEmpty):
        s.imports.request(OWNER, s.source, s.archive.manifest, s.archive.files)  # it has other members
    s.world.document.save(OWNER, s.target, "# Memory\n- already here\n", 0)
    before = s.world.snapshot()
    with pytest.raises(ImportTargetNotEmpty):
        s.imports.request(OWNER, s.target, s.archive.manifest, s.archive.files)
    assert s.world.snapshot() == before


def test_only_the_owner_who_exported_it_imports_an_archive() -> None:
    s = prepared()
    theirs = s.world.access.create_workspace(EDITOR, "theirs", ShareType.SHARED)
    with pytest.raises(Forbidden):
        s.imports.request(EDITOR, theirs, s.archive.manifest, s.archive.files)


def test_the_workspace_is_closed_until_the_import_completes() -> None:
    s = prepared()
    s.imports.request(OWNER, s.target, s.archive.manifest, s.archive.files)
    with pytest.raises(WorkspaceImporting):
        s.world.document.read(OWNER, s.target)
    run(s.imports, s.runner.started[-1])
    assert s.world.document.read(OWNER, s.target).content == s.archive.files[ExportFile.DOCUMENT_MD.value]


def test_a_step_or_a_request_repeated_after_it_landed_writes_nothing_twice() -> None:
    s = prepared()
    first = s.imports.request(OWNER, s.target, s.archive.manifest, s.archive.files)
    data = s.runner.started[-1]
    s.imports.apply_file(data.workspace_id, data.import_id, ExportFile.DOCUMENTS)
    again = s.imports.apply_file(data.workspace_id, data.import_id, ExportFile.DOCUMENTS)
    assert (again.steps, again.applied) == (1, 0)
    assert s.imports.request(OWNER, s.target, s.archive.manifest, s.archive.files).import_id == first.import_id
    run(s.imports, data)
    finished = s.imports.finish(data.workspace_id, data.import_id)
    assert finished.counts == {"versions": 3, "chains": 2, "revisions": 2, "members": 3}


def test_a_failed_run_shows_and_the_archive_posted_again_resumes_it() -> None:
    s = prepared()
    first = s.imports.request(OWNER, s.target, s.archive.manifest, s.archive.files)
    data = s.runner.started[-1]
    s.imports.apply_file(data.workspace_id, data.import_id, ExportFile.MEMBERS)
    s.runner.failing.add(first.import_id)  # the workflow gave up (say, Temporal timed it out)
    assert s.imports.progress(OWNER, s.target, first.import_id).status == "failed"
    with pytest.raises(WorkspaceImporting):  # still closed: half an import is not a workspace to use
        s.world.document.read(OWNER, s.target)
    again = s.imports.request(OWNER, s.target, s.archive.manifest, s.archive.files)
    assert (again.import_id, again.status, again.steps_applied) == (first.import_id, "running", 1)
    assert len(s.runner.started) == 2
    run(s.imports, s.runner.started[-1])
    done = s.imports.progress(OWNER, s.target, first.import_id)
    assert (done.status, done.counts) == ("completed", {"versions": 3, "chains": 2, "revisions": 2, "members": 3})


def test_the_owner_may_abandon_an_import_by_deleting_the_workspace() -> None:
    s = prepared()
    s.imports.request(OWNER, s.target, s.archive.manifest, s.archive.files)
    data = s.runner.started[-1]
    s.imports.apply_file(data.workspace_id, data.import_id, ExportFile.MEMBERS)
    deletions, _ = deletion(s.world)
    assert deletions.delete(OWNER, s.target, s.target).status == "running"
    with pytest.raises(ImportNotRunning):  # the workflow's next step writes nothing into a deleted workspace
        s.imports.apply_file(data.workspace_id, data.import_id, ExportFile.POLICY)
