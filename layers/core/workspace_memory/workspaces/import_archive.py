"""An archive as the import checks it, in pure functions (docs/decisions/0069): the manifest is this service's
(its format, a whole-workspace export, the files it lists and their digests), each file's rows are rows the
export writes, and what the import derives from it (its id, the staged files' encryption context)."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from workspace_memory.kernel.terms import ExportFile, ExportScope
from workspace_memory.workspaces.export_archive import MANIFEST_FORMAT, digest_of
from workspace_memory.workspaces.export_contract import FILES
from workspace_memory.workspaces.import_errors import InvalidArchive
from workspace_memory.workspaces.import_rows import (
    EntryIn,
    MemberIn,
    PolicyIn,
    RetentionIn,
    VersionIn,
    one_of,
    rows_of,
)

IMPORT_ID = re.compile(r"im_[0-9a-f]{24}")
_EXPORT_ID = re.compile(r"ex_[0-9a-f]{24}")
FILES_IMPORTED = FILES[ExportScope.WORKSPACE]
"""What a whole-workspace archive holds, and so what an import reads: a member's own export is theirs to keep,
not a workspace to restore."""


def import_id_of(workspace_id: str, export_id: str) -> str:
    """One import per archive and target: the same archive posted again is the same import (idempotent)."""
    digest = hashlib.sha256(f"{workspace_id}\0{export_id}".encode()).hexdigest()
    return f"im_{digest[:24]}"


def import_context(workspace_id: str, import_id: str, file: ExportFile) -> dict[str, str]:
    """A staged file's ciphertext bound to its target workspace, its import and its name."""
    return {"workspace": workspace_id, "kind": "import", "import": import_id, "file": file.value}


@dataclass(frozen=True)
class Contents:
    """An archive's rows, checked."""

    versions: list[VersionIn]
    entries: list[EntryIn]
    members: list[MemberIn]
    policy: PolicyIn
    retention: RetentionIn


@dataclass(frozen=True)
class Verified:
    """An archive whose manifest and files agree: where it came from, its files' text, and its rows."""

    export_id: str
    source_workspace: str
    requested_by: str
    texts: dict[ExportFile, str]
    contents: Contents


def verified(manifest: Mapping[str, Any], files: Mapping[str, str]) -> Verified:
    """The archive, if this service's export wrote it as it stands; else `InvalidArchive` naming what is wrong."""
    if manifest.get("format") != MANIFEST_FORMAT or manifest.get("scope") != ExportScope.WORKSPACE.value:
        raise InvalidArchive("only an archive of a whole workspace (scope `workspace`, format 1) can be imported")
    export_id, source, requester = (manifest.get(name) for name in ("exportId", "workspaceId", "requestedBy"))
    if not isinstance(export_id, str) or not _EXPORT_ID.fullmatch(export_id):
        raise InvalidArchive("the manifest names no export this service issued")
    if not isinstance(source, str) or not isinstance(requester, str):
        raise InvalidArchive("the manifest names no workspace or requester")
    names = {file.value for file in FILES_IMPORTED}
    listed = manifest.get("files")
    if not isinstance(listed, dict) or set(listed) != names or set(files) != names:
        raise InvalidArchive(f"an archive holds exactly the files {sorted(names)}, each listed in its manifest")
    texts = {file: files[file.value] for file in FILES_IMPORTED}
    for file, text in texts.items():
        try:
            digest = digest_of(file, text)
        except ValueError:
            raise InvalidArchive(f"{file.value} is not the JSON its manifest lists") from None
        if listed[file.value] != digest:
            raise InvalidArchive(f"{file.value} does not match its manifest (count, SHA-256 or size)")
    return Verified(export_id, source, requester, texts, contents_of(texts))


def contents_of(texts: Mapping[ExportFile, str]) -> Contents:
    """The rows of the files, each checked; and what must hold between them (a document's versions in order,
    an entry's revisions numbered from 1, one owner)."""
    parsed = {file: json.loads(text) for file, text in texts.items() if file is not ExportFile.DOCUMENT_MD}
    versions = rows_of(VersionIn, parsed[ExportFile.DOCUMENTS], ExportFile.DOCUMENTS.value)
    entries = rows_of(EntryIn, parsed[ExportFile.ENTRIES], ExportFile.ENTRIES.value)
    members = rows_of(MemberIn, parsed[ExportFile.MEMBERS], ExportFile.MEMBERS.value)
    numbers = [row.version for row in versions]
    if numbers != sorted(set(numbers)):
        raise InvalidArchive("documents.json lists each version once, in order")
    chains = [(row.entry_id, row.revision) for row in entries]
    if chains != sorted(set(chains)):
        raise InvalidArchive("entries.json lists each revision once, in chain order")
    if len({row.user_id for row in members}) != len(members):
        raise InvalidArchive("members.json lists each member once")
    head = versions[-1].content if versions and versions[-1].content is not None else ""
    if texts[ExportFile.DOCUMENT_MD] != head:
        raise InvalidArchive("document.md is not the text of the archive's last version")
    return Contents(
        versions=versions,
        entries=entries,
        members=members,
        policy=one_of(PolicyIn, parsed[ExportFile.POLICY], ExportFile.POLICY.value),
        retention=one_of(RetentionIn, parsed[ExportFile.RETENTION], ExportFile.RETENTION.value),
    )
