"""Importing a workspace archive (docs/decisions/0069): the owner restores a whole-workspace export into a new,
empty workspace they own, re-encrypted under its branch key, by a Temporal workflow.

The request checks the archive (it is this service's, as it exported it), refuses a target that holds
anything, closes the workspace (`importingId`: every other route answers 409 until the import ends), and stages
the archive's files sealed under the target's key; the workflow applies them file by file in batches, each
recorded once on the import (a retried or resumed step writes nothing twice), then completes the import in
one transaction that opens the workspace again. The same archive posted again is the same import."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from workspace_memory.entries.key_secret import KeySecret
from workspace_memory.kernel.clock import Clock, iso
from workspace_memory.kernel.errors import Forbidden, WorkspaceNotFound
from workspace_memory.kernel.sealed import unseal
from workspace_memory.kernel.terms import ExportFile, ImportStatus, Role
from workspace_memory.store import export_queries, keys
from workspace_memory.store.changes import (
    Absent,
    ApplyImport,
    BeginImport,
    Change,
    CompleteImport,
    Create,
    EndImport,
    ImportHolds,
    Label,
    MemberIsOwner,
    Put,
)
from workspace_memory.store.entry_records import entry_counter_item
from workspace_memory.store.import_records import ImportRecord
from workspace_memory.store.ports import Cipher, Table, TransactionCancelled
from workspace_memory.store.workspace_records import MemberRecord, Workspace
from workspace_memory.workspaces.archive_signature import check_signature
from workspace_memory.workspaces.export_archive import assembled, expiry
from workspace_memory.workspaces.exports import chunk_items, chunk_key, delete_all
from workspace_memory.workspaces.import_apply import ImportWrites, Target, entry_counts, owners_other_than
from workspace_memory.workspaces.import_archive import (
    FILES_IMPORTED,
    IMPORT_ID,
    Contents,
    Verified,
    contents_of,
    import_context,
    import_id_of,
    verified,
)
from workspace_memory.workspaces.import_contract import APPLIED_FILES, FileResult, FinishResult, ImportInput
from workspace_memory.workspaces.import_errors import (
    ImportNotFound,
    ImportNotRunning,
    ImportTargetNotEmpty,
    InvalidArchive,
    InvalidImportId,
    WorkspaceImporting,
)


class ImportRunner(Protocol):
    def start(self, data: ImportInput) -> None: ...

    def failed(self, import_id: str) -> bool:
        """Whether the import's workflow ended without completing it (failed, terminated, timed out)."""
        ...


@dataclass(frozen=True)
class ImportProgress:
    import_id: str
    workspace_id: str
    source_export: str
    status: str
    steps_applied: int
    counts: dict[str, int]
    created_at: str
    completed_at: str | None


def require_import_id(import_id: str) -> str:
    if not IMPORT_ID.fullmatch(import_id):
        raise InvalidImportId("an import id is im_ followed by 24 hex digits")
    return import_id


class ImportService:
    def __init__(self, table: Table, cipher: Cipher, clock: Clock, runner: ImportRunner) -> None:
        self._table = table
        self._cipher = cipher
        self._clock = clock
        self._runner = runner
        self._writes = ImportWrites(cipher, KeySecret(table, cipher))

    def request(
        self, user_id: str, workspace_id: str, manifest: dict[str, Any], files: dict[str, str]
    ) -> ImportProgress:
        """Checks, stages and starts the import; posted again (a lost answer), the same import, resumed."""
        meta = self._owner(user_id, workspace_id)
        check_signature(self._cipher, manifest)
        archive = verified(manifest, files)
        if archive.requested_by != user_id:
            raise Forbidden("an archive is imported by the owner who exported it")
        if owners_other_than(archive.contents, user_id):
            raise InvalidArchive("members.json names another owner")
        import_id = import_id_of(workspace_id, archive.export_id)
        record = self._record(workspace_id, import_id)
        if record is None:
            if meta.importing_id is not None:
                raise WorkspaceImporting("the workspace is being filled from another archive")
            record = self._begin(user_id, meta, import_id, archive)
        if record.status is ImportStatus.RUNNING:
            self._stage(record, archive)
            self._runner.start(ImportInput(workspace_id=workspace_id, import_id=import_id))
            return self._progress(record, started=True)
        return self._progress(record)

    def progress(self, user_id: str, workspace_id: str, import_id: str) -> ImportProgress:
        self._member(user_id, workspace_id)
        record = self._record(workspace_id, require_import_id(import_id))
        if record is None or record.requested_by != user_id or record.expired(self._clock.now()):
            raise ImportNotFound("import not found")
        return self._progress(record)

    def apply_file(self, workspace_id: str, import_id: str, file: ExportFile) -> FileResult:
        """The workflow's step: every batch of one file not yet applied, each in a transaction that records it."""
        record, meta = self._running(workspace_id, require_import_id(import_id))
        if file not in APPLIED_FILES:
            raise InvalidArchive(f"an import applies {', '.join(f.value for f in APPLIED_FILES)}, not {file.value}")
        target = Target(meta, record.requested_by, iso(self._clock.now()))
        done = applied = 0
        for step in self._writes.steps(file, self._contents(record), target):
            done += 1
            if step.name in record.applied:
                continue
            apply = ApplyImport(workspace_id, import_id, record.requested_by, step.name, step.counts)
            try:
                self._table.transact([apply, ImportHolds(workspace_id, import_id), *map(Put, step.items)])
                applied += 1
            except TransactionCancelled as exc:
                if Label.WORKSPACE in exc.failed():
                    raise ImportNotRunning("the import is no longer running; nothing was written") from None
                record, _ = self._running(workspace_id, import_id)  # applied by a concurrent attempt
        return FileResult(file=file, steps=done, applied=applied)

    def finish(self, workspace_id: str, import_id: str) -> FinishResult:
        """The workflow's last step: the entry counter, the import completed and the workspace opened, in one
        transaction; then the staged files deleted. Repeated after it landed: the same answer."""
        record = self._record(workspace_id, require_import_id(import_id))
        if record is not None and record.status is ImportStatus.COMPLETED:
            self._unstage(workspace_id, import_id)
            return FinishResult(status=record.status.value, counts=record.counts)
        record, _ = self._running(workspace_id, import_id)
        contents = self._contents(record)
        counts = entry_counts(contents)
        changes: list[Change] = [
            CompleteImport(workspace_id, import_id, record.requested_by, iso(self._clock.now())),
            EndImport(workspace_id, import_id),
            *([Put(entry_counter_item(workspace_id, counts))] if counts else []),
        ]
        try:
            self._table.transact(changes)
        except TransactionCancelled:
            done = self._record(workspace_id, import_id)
            if done is None or done.status is not ImportStatus.COMPLETED:
                raise ImportNotRunning("the import is no longer running") from None
        self._unstage(workspace_id, import_id)
        done = self._record(workspace_id, import_id)
        assert done is not None
        return FinishResult(status=done.status.value, counts=done.counts)

    def _begin(self, user_id: str, meta: Workspace, import_id: str, archive: Verified) -> ImportRecord:
        """The import's record and the workspace closed, iff it is empty: no document, entry, policy or key
        secret (checked in the transaction) and no member but its owner (read just before)."""
        ws = meta.id
        if any(member.user_id != user_id for member in export_queries.members(self._table, ws)):
            raise ImportTargetNotEmpty("the workspace has other members: import into a new workspace")
        now = self._clock.now()
        record = ImportRecord(
            import_id,
            ws,
            archive.source_workspace,
            archive.export_id,
            user_id,
            ImportStatus.RUNNING,
            iso(now),
            expiry(now),
        )
        retention = archive.contents.retention
        empty = [keys.head(ws), keys.entry_counter(ws), keys.policy(ws), keys.entry_secret(ws)]
        try:
            self._table.transact(
                [
                    Create(record.to_item(), Label.IMPORT),
                    BeginImport(ws, import_id, retention.history_days, retention.agent_days),
                    MemberIsOwner(ws, user_id),
                    *(Absent(key) for key in empty),
                ]
            )
        except TransactionCancelled as exc:
            failed = exc.failed()
            found = self._record(ws, import_id)
            if Label.IMPORT in failed and found is not None:
                return found  # a concurrent request of the same archive began it
            if Label.IMPORT_TARGET in failed:
                raise ImportTargetNotEmpty("the workspace holds memory already: import into a new workspace") from None
            if Label.ACCESS in failed:
                raise Forbidden("only the workspace owner may import into it") from None
            raise WorkspaceImporting("the workspace is being filled from another archive") from None
        return record

    def _stage(self, record: ImportRecord, archive: Verified) -> None:
        """Each file not staged yet, sealed under the target's key, in one transaction per file."""
        ws, import_id = record.workspace_id, record.import_id
        staged = assembled(export_queries.chunks(self._table, ws, import_id))
        for file in FILES_IMPORTED:
            if file in staged:
                continue
            context = import_context(ws, import_id, file)
            items = chunk_items(self._cipher, archive.texts[file], context, ws, import_id, file, record.ttl)
            try:
                self._table.transact([*map(Put, items), ImportHolds(ws, import_id)])
            except TransactionCancelled:
                raise ImportNotRunning("the import is no longer running; nothing was staged") from None

    def _contents(self, record: ImportRecord) -> Contents:
        ws, import_id = record.workspace_id, record.import_id
        staged = assembled(export_queries.chunks(self._table, ws, import_id))
        if any(file not in staged for file in FILES_IMPORTED):
            raise ImportNotRunning("a staged file of the import is missing; post the archive again")
        texts = {
            file: unseal(self._cipher, staged[file], import_context(ws, import_id, file)) for file in FILES_IMPORTED
        }
        return contents_of(texts)

    def _unstage(self, workspace_id: str, import_id: str) -> None:
        chunks = export_queries.chunks(self._table, workspace_id, import_id)
        delete_all(self._table, [chunk_key(workspace_id, chunk) for chunk in chunks])

    def _running(self, workspace_id: str, import_id: str) -> tuple[ImportRecord, Workspace]:
        meta_item, record_item = self._table.get_many([keys.meta(workspace_id), keys.import_(workspace_id, import_id)])
        meta, record = Workspace.of(meta_item), ImportRecord.of(record_item)
        holds = meta is not None and not meta.deleted and meta.importing_id == import_id
        if not holds or record is None or record.status is not ImportStatus.RUNNING:
            raise ImportNotRunning("the import is no longer running; nothing was written")
        assert meta is not None
        return record, meta

    def _record(self, workspace_id: str, import_id: str) -> ImportRecord | None:
        return ImportRecord.of(self._table.get(*keys.import_(workspace_id, import_id)))

    def _member(self, user_id: str, workspace_id: str) -> tuple[Workspace, MemberRecord]:
        meta_item, member_item = self._table.get_many([keys.meta(workspace_id), keys.member(workspace_id, user_id)])
        meta, member = Workspace.of(meta_item), MemberRecord.of(member_item)
        if meta is None or meta.deleted or member is None:
            raise WorkspaceNotFound("workspace not found")
        return meta, member

    def _owner(self, user_id: str, workspace_id: str) -> Workspace:
        meta, member = self._member(user_id, workspace_id)
        if member.role is not Role.OWNER:
            raise Forbidden("only the workspace owner may import into it")
        return meta

    def _progress(self, record: ImportRecord, *, started: bool = False) -> ImportProgress:
        """`failed` for a running import whose workflow ended without completing it (not asked right after a
        start: that run is new). Posting the same archive again starts a new run that resumes it; deleting the
        workspace abandons it."""
        status = record.status.value
        if record.status is ImportStatus.RUNNING and not started and self._runner.failed(record.import_id):
            status = "failed"
        return ImportProgress(
            import_id=record.import_id,
            workspace_id=record.workspace_id,
            source_export=record.source_export,
            status=status,
            steps_applied=len(record.applied),
            counts=record.counts,
            created_at=record.created_at,
            completed_at=record.completed_at,
        )
