"""The smallest archive an import takes, made here as the export would make it: an empty document and no
entries, one owner, the manifest signed under the stack's key (the test holds it, as the exports function
does). For drives that need an import's items without an export's worker."""

from __future__ import annotations

import json
import secrets
from typing import Any

from workspace_memory.kernel.terms import ExportFile
from workspace_memory.store.ports import Cipher
from workspace_memory.workspaces.archive_signature import signed
from workspace_memory.workspaces.export_archive import MANIFEST_FORMAT, digest_of
from workspace_memory.workspaces.export_files import canonical


def minimal_archive(cipher: Cipher, owner: str, source: str) -> dict[str, Any]:
    files = {
        ExportFile.DOCUMENTS: canonical([]),
        ExportFile.DOCUMENT_MD: "",
        ExportFile.ENTRIES: canonical([]),
        ExportFile.POLICY: canonical({"clearGeneration": 0, "mode": "read_only", "revision": 0}),
        ExportFile.MEMBERS: canonical([{"role": "owner", "userId": owner}]),
        ExportFile.RETENTION: canonical({"agentDays": 90, "historyDays": 90}),
    }
    manifest = {
        "format": MANIFEST_FORMAT,
        "exportId": f"ex_{secrets.token_hex(12)}",
        "workspaceId": source,
        "scope": "workspace",
        "requestedBy": owner,
        "createdAt": "2026-12-03T00:00:00.000Z",
        "expiresAt": 1_800_000_000,
        "files": {file.value: digest_of(file, text) for file, text in sorted(files.items())},
    }
    wire = json.loads(json.dumps(signed(cipher, manifest)))
    return {"manifest": wire, "files": {file.value: text for file, text in files.items()}}
