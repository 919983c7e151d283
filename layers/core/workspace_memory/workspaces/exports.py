"""Exporting a workspace (docs/decisions/0068): a person's own data (`me`) or, for the owner, the whole workspace
(`workspace`), written by a Temporal workflow as sealed files under the workspace's branch key, downloadable
once by whoever asked, expiring on its own 24 hours after the request.

`ExportService` serves the people's routes (request, progress, download) and the workflow's steps (write one
file, finish with the manifest). Each step is idempotent: a file written again is the same plaintext, so a
worker killed mid-export ends with the same manifest."""

from __future__ import annotations

import contextlib
import json
import re
from dataclasses import dataclass
from typing import Protocol

from workspace_memory.kernel.clock import Clock, iso
from workspace_memory.kernel.errors import (
    DecryptionFailed,
    ExportDownloaded,
    ExportNotFound,
    ExportNotReady,
    ExportNotRunning,
    ExportTooLarge,
    Forbidden,
    InvalidExportId,
    InvalidInput,
    Unavailable,
    WorkspaceNotFound,
)
from workspace_memory.kernel.ids import new_id
from workspace_memory.kernel.sealed import seal, unseal
from workspace_memory.kernel.terms import ExportFile, ExportScope, ExportStatus, Role
from workspace_memory.store import export_queries, keys
from workspace_memory.store.changes import (
    Create,
    Delete,
    DownloadExport,
    ExportRunning,
    FinishExport,
    Label,
    MemberExists,
    MemberIsOwner,
    Put,
    WorkspaceLive,
)
from workspace_memory.store.export_records import ExportChunk, ExportRecord
from workspace_memory.store.ports import Cipher, Item, Table, TransactionCancelled
from workspace_memory.store.workspace_records import MemberRecord, Workspace
from workspace_memory.workspaces.archive_signature import signed
from workspace_memory.workspaces.export_archive import (
    assembled,
    digest_of,
    expiry,
    export_context,
    manifest_of,
    slices,
    wire_bytes,
)
from workspace_memory.workspaces.export_contract import (
    FILES,
    MAX_ARCHIVE_BYTES,
    ExportInput,
    FileResult,
    FinishResult,
)
from workspace_memory.workspaces.export_files import ExportFiles, canonical

EXPORT_ID = re.compile(r"ex_[0-9a-f]{24}")
DELETES_PER_TRANSACTION = 99


@dataclass(frozen=True)
class RunProgress:
    """What the workflow's memo says (phase and files written), and whether the run failed."""

    phase: str
    files_done: int
    files_total: int
    failed: bool


class ExportRunner(Protocol):
    def start(self, export: ExportInput) -> None: ...

    def progress(self, export_id: str) -> RunProgress | None: ...


@dataclass(frozen=True)
class ExportProgress:
    export_id: str
    workspace_id: str
    scope: str
    status: str
    """`running`, `ready`, `downloaded`, `too_large`, or `failed` (the workflow failed before finishing)."""
    phase: str
    files_done: int
    files_total: int
    created_at: str
    expires_at: str


@dataclass(frozen=True)
class Archive:
    manifest: dict[str, object]
    files: dict[str, str]


def require_export_id(export_id: str) -> str:
    if not EXPORT_ID.fullmatch(export_id):
        raise InvalidExportId("an export id is ex_ followed by 24 hex digits")
    return export_id


class ExportService:
    def __init__(self, table: Table, cipher: Cipher, clock: Clock, runner: ExportRunner) -> None:
        self._table = table
        self._cipher = cipher
        self._clock = clock
        self._runner = runner
        self._files = ExportFiles(table, cipher, clock)

    def request(self, user_id: str, workspace_id: str, scope: ExportScope) -> ExportProgress:
        member = self._member(user_id, workspace_id)
        if scope is ExportScope.WORKSPACE and member.role is not Role.OWNER:
            raise Forbidden("only the workspace owner may export the whole workspace")
        now = self._clock.now()
        record = ExportRecord(new_id("ex"), workspace_id, scope, user_id, ExportStatus.RUNNING, iso(now), expiry(now))
        access = MemberIsOwner if scope is ExportScope.WORKSPACE else MemberExists
        try:
            self._table.transact(
                [Create(record.to_item(), Label.EXPORT), WorkspaceLive(workspace_id), access(workspace_id, user_id)]
            )
        except TransactionCancelled as exc:
            if Label.ACCESS in exc.failed() and scope is ExportScope.WORKSPACE:
                raise Forbidden("only the workspace owner may export the whole workspace") from None
            raise WorkspaceNotFound("workspace not found") from None
        try:
            self._runner.start(ExportInput(workspace_id=workspace_id, export_id=record.export_id, scope=scope))
        except Unavailable:
            # Nobody was told this export's id: leave no record running for a day. Had the start reached
            # Temporal after all, its first step finds no export and writes nothing.
            self._table.transact([Delete(keys.export(workspace_id, record.export_id))])
            raise
        return self._progress(record)

    def progress(self, user_id: str, workspace_id: str, export_id: str) -> ExportProgress:
        return self._progress(self._own(user_id, workspace_id, export_id))

    def download(self, user_id: str, workspace_id: str, export_id: str) -> Archive:
        """The archive, once: its files are decrypted, checked against the manifest and deleted in this request
        (the status moves to `downloaded` in the same transaction as the first deletions)."""
        record = self._own(user_id, workspace_id, export_id)
        if record.status is ExportStatus.DOWNLOADED:
            raise ExportDownloaded("this export was downloaded already; request a new one")
        if record.status is ExportStatus.TOO_LARGE:
            raise ExportTooLarge(f"the archive is over {MAX_ARCHIVE_BYTES} bytes; nothing of it was kept")
        if record.status is not ExportStatus.READY:
            raise ExportNotReady("the export is still running; follow its progress")
        chunks = export_queries.chunks(self._table, workspace_id, export_id)
        texts = self._texts(record, chunks)
        manifest_text = texts.pop(ExportFile.MANIFEST.value, None)
        if manifest_text is None:
            raise DecryptionFailed("the export's manifest is missing")
        archive = Archive(_parsed(manifest_text), texts)
        self._check(archive)
        now = self._clock.now()
        keys_ = [(chunk_key(workspace_id, chunk)) for chunk in chunks]
        first, rest = keys_[:DELETES_PER_TRANSACTION], keys_[DELETES_PER_TRANSACTION:]
        try:
            self._table.transact(
                [DownloadExport(workspace_id, export_id, user_id, iso(now), int(now)), *map(Delete, first)]
            )
        except TransactionCancelled:
            raise ExportDownloaded("this export was downloaded already; request a new one") from None
        delete_all(self._table, rest)
        return archive

    def write_file(self, workspace_id: str, export_id: str, file: ExportFile) -> FileResult:
        """The workflow's step: one file built, sealed and stored in chunks, all in one transaction that lands
        only while the export runs. A file alone past the archive limit is not stored (`too_large`)."""
        record = self._running(workspace_id, require_export_id(export_id))
        if file not in FILES[record.scope]:
            raise InvalidInput(f"a {record.scope.value} export has no file {file.value}")
        built = self._files.build(record, file)
        if wire_bytes(built.text) > MAX_ARCHIVE_BYTES:
            return FileResult(file=file, count=built.count, chunks=0, too_large=True)
        chunks = self._store(record, file, built.text)
        return FileResult(file=file, count=built.count, chunks=chunks)

    def finish(self, workspace_id: str, export_id: str, too_large: bool) -> FinishResult:
        """The workflow's last step: the manifest computed from the stored files (decrypted again: its digests
        never cross the workflow), sealed as a file of its own, and the status `ready`; or, past the limit,
        every chunk deleted and the status `too_large`. Repeated after it landed: the same answer."""
        record = export_queries.export(self._table, workspace_id, require_export_id(export_id))
        if record is None or record.expired(self._clock.now()):
            raise ExportNotRunning("the export is gone")
        files = FILES[record.scope]
        if record.status is not ExportStatus.RUNNING:
            return FinishResult(status=record.status.value, files=len(files))
        record = self._running(workspace_id, export_id)
        chunks = export_queries.chunks(self._table, workspace_id, export_id)
        texts = {ExportFile(name): text for name, text in self._texts(record, chunks).items()}
        texts.pop(ExportFile.MANIFEST, None)
        if not too_large and any(file not in texts for file in files):
            raise ExportNotRunning("a file of the export is missing; write it first")
        if too_large or sum(wire_bytes(text) for text in texts.values()) > MAX_ARCHIVE_BYTES:
            self._discard(record, chunks)
            return FinishResult(status=ExportStatus.TOO_LARGE.value, files=len(files))
        manifest = canonical(signed(self._cipher, manifest_of(record, {file: texts[file] for file in files})))
        self._store(record, ExportFile.MANIFEST, manifest, FinishExport(workspace_id, export_id, ExportStatus.READY))
        return FinishResult(status=ExportStatus.READY.value, files=len(files))

    def _store(self, record: ExportRecord, file: ExportFile, text: str, finish: FinishExport | None = None) -> int:
        ws, export_id = record.workspace_id, record.export_id
        items = chunk_items(self._cipher, text, export_context(ws, export_id, file), ws, export_id, file, record.ttl)
        guard = finish or ExportRunning(ws, export_id, int(self._clock.now()))
        try:
            self._table.transact([*(Put(item) for item in items), guard, WorkspaceLive(ws)])
        except TransactionCancelled:
            raise ExportNotRunning("the export is no longer running; nothing was written") from None
        return len(items)

    def _discard(self, record: ExportRecord, chunks: list[ExportChunk]) -> None:
        ws, export_id = record.workspace_id, record.export_id
        delete_all(self._table, [chunk_key(ws, chunk) for chunk in chunks])
        with contextlib.suppress(TransactionCancelled):  # finished by an earlier attempt of this step
            self._table.transact([FinishExport(ws, export_id, ExportStatus.TOO_LARGE)])

    def _texts(self, record: ExportRecord, chunks: list[ExportChunk]) -> dict[str, str]:
        found = assembled(chunks)
        return {
            file.value: unseal(self._cipher, ciphertext, export_context(record.workspace_id, record.export_id, file))
            for file, ciphertext in found.items()
        }

    def _check(self, archive: Archive) -> None:
        """Every file the manifest lists is there, with the digest it lists."""
        listed = archive.manifest.get("files")
        if not isinstance(listed, dict) or set(listed) != set(archive.files):
            raise DecryptionFailed("the export's files do not match its manifest")
        for name, text in archive.files.items():
            if listed[name] != digest_of(ExportFile(name), text):
                raise DecryptionFailed("an export file does not match its manifest digest")

    def _running(self, workspace_id: str, export_id: str) -> ExportRecord:
        """The export, while it runs in a live workspace (a deleted one's export is over: nothing is written)."""
        meta_item, export_item = self._table.get_many([keys.meta(workspace_id), keys.export(workspace_id, export_id)])
        meta, record = Workspace.of(meta_item), ExportRecord.of(export_item)
        live = meta is not None and not meta.deleted
        if not live or record is None or record.status is not ExportStatus.RUNNING or record.expired(self._clock.now()):
            raise ExportNotRunning("the export is no longer running; nothing was written")
        return record

    def _member(self, user_id: str, workspace_id: str) -> MemberRecord:
        meta_item, member_item = self._table.get_many([keys.meta(workspace_id), keys.member(workspace_id, user_id)])
        meta, member = Workspace.of(meta_item), MemberRecord.of(member_item)
        if meta is None or meta.deleted or member is None:
            raise WorkspaceNotFound("workspace not found")
        return member

    def _own(self, user_id: str, workspace_id: str, export_id: str) -> ExportRecord:
        """The caller's own, unexpired export, while they are still a member; anything else is the same 404."""
        require_export_id(export_id)
        meta_item, member_item, export_item = self._table.get_many(
            [keys.meta(workspace_id), keys.member(workspace_id, user_id), keys.export(workspace_id, export_id)]
        )
        meta, member, record = Workspace.of(meta_item), MemberRecord.of(member_item), ExportRecord.of(export_item)
        if meta is None or meta.deleted or member is None:
            raise WorkspaceNotFound("workspace not found")
        if record is None or record.requested_by != user_id or record.expired(self._clock.now()):
            raise ExportNotFound("export not found")
        return record

    def _progress(self, record: ExportRecord) -> ExportProgress:
        total = len(FILES[record.scope])
        run = self._runner.progress(record.export_id)
        status = record.status.value
        if run is not None and run.failed and record.status is ExportStatus.RUNNING:
            status = "failed"
        finished = record.status is not ExportStatus.RUNNING
        return ExportProgress(
            export_id=record.export_id,
            workspace_id=record.workspace_id,
            scope=record.scope.value,
            status=status,
            phase="done" if finished else run.phase if run is not None else "started",
            files_done=total if finished else run.files_done if run is not None else 0,
            files_total=total,
            created_at=record.created_at,
            expires_at=iso(record.ttl),
        )


def chunk_items(
    cipher: Cipher, text: str, context: dict[str, str], workspace_id: str, owner_id: str, file: ExportFile, ttl: int
) -> list[Item]:
    """A file sealed once under `context` and cut in chunk items of the export or import `owner_id`."""
    parts = slices(seal(cipher, text, context).ciphertext)
    return [
        ExportChunk(owner_id, file, number, len(parts), part, ttl).to_item(workspace_id)
        for number, part in enumerate(parts)
    ]


def delete_all(table: Table, found: list[keys.Key]) -> None:
    """Unconditional deletes, 100 to a transaction (TransactWriteItems' limit)."""
    for start in range(0, len(found), 100):
        table.transact([Delete(key) for key in found[start : start + 100]])


def chunk_key(workspace_id: str, chunk: ExportChunk) -> keys.Key:
    return keys.export_part(workspace_id, chunk.export_id, chunk.file.value, chunk.number)


def _parsed(text: str) -> dict[str, object]:
    value = json.loads(text)
    if not isinstance(value, dict):
        raise DecryptionFailed("the export's manifest is not an object")
    return value
